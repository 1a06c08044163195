"""Who may watch the crawler and who may operate it: one answer for the admin API, the dashboard and the admin.

`is_staff` only lets a user into the admin site. Watching (the dashboard,
status, job lists) is for active staff; operating (run a pass, reconcile,
restart the browser, requeue, release, set a session cookie, force
re-analysis, end a cooldown) needs the `crawler.operate_crawler`
permission, which superusers have and the "Operators" group (migration
`crawler 0007`) grants.
"""

from __future__ import annotations

from typing import Any

OPERATE_CRAWLER = "crawler.operate_crawler"
OPERATORS_GROUP = "Operators"


def can_operate(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.has_perm(OPERATE_CRAWLER))


def can_watch(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and (user.is_staff or can_operate(user)))
