"""Who may watch the crawler and who may operate it: one answer for the admin API, the dashboard and the admin.

`is_staff` only lets a user into the admin site. Watching (the dashboard,
status, job lists) is for active staff; operating (run a pass, reconcile,
restart the browser, requeue, release, set a session cookie, force
re-analysis, end a cooldown) needs the `crawler.operate_crawler`
permission, which superusers have and the "Operators" group (migration
`crawler 0007`) grants.

A user signed in with an API key (`accounts.api_keys`) operates only through
a key scoped `operate`, and only while they hold the permission; a key does
not even watch unless it could operate: a key made for a reading app opens
no admin route, whoever owns it. Sessions, passwords and API tokens carry the
user's full rights, as before.
"""

from __future__ import annotations

from typing import Any

from accounts import api_keys

OPERATE_CRAWLER = api_keys.OPERATOR_PERMISSION
OPERATORS_GROUP = "Operators"


def _active(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


def can_operate(user: Any) -> bool:
    return _active(user) and api_keys.may_operate_with(user) and bool(user.has_perm(OPERATE_CRAWLER))


def can_watch(user: Any) -> bool:
    if api_keys.key_scope(user) is not None:
        return can_operate(user)
    return _active(user) and (bool(user.is_staff) or can_operate(user))
