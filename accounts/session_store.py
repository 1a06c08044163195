"""Django's database sessions, read with one statement composed once instead of a queryset built per request.

A browser reading pages sends its session cookie with each of them, and
every such request reads its session row before anything else: through
the ORM that read was about a third of a web reader page request's CPU
(the filter, the compiler, the model), more than the row itself. This
store reads the same row of the same table under the same rule (the key,
not yet expired) with a statement composed once per database vendor;
writing, creating, deleting and the asynchronous read stay Django's.
`SESSION_ENGINE` names it.
"""

from __future__ import annotations

from functools import cache

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.contrib.sessions.models import Session
from django.db import connections, router
from django.utils import timezone

_COLUMNS = ("session_key", "session_data", "expire_date")  # the model's own order, which `from_db` reads


class SessionStore(DatabaseSessionStore):
    def _get_session_from_db(self) -> Session | None:
        if self.session_key is None:  # an invalid cookie: Django's query would match nothing either
            self._session_key = None
            return None
        connection = connections[router.db_for_read(Session)]
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            cursor.execute(_statement(connection.vendor, connection.alias), [self.session_key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        return Session.from_db(connection.alias, list(_COLUMNS), _converted(connection, row))


def _converted(connection, row: tuple) -> list:  # type: ignore[no-untyped-def,type-arg]
    """The row as the model holds it (the expiry an aware datetime on every backend)."""
    field = Session._meta.get_field("expire_date")
    values = list(row)
    for converter in connection.ops.get_db_converters(field.get_col(Session._meta.db_table)):
        values[2] = converter(values[2], field, connection)
    return values


@cache
def _statement(vendor: str, alias: str) -> str:
    q = connections[alias].ops.quote_name
    columns = ", ".join(q(field.column) for field in Session._meta.concrete_fields if field.attname in _COLUMNS)
    key = q(Session._meta.get_field("session_key").column)
    expires = q(Session._meta.get_field("expire_date").column)
    return f"SELECT {columns} FROM {q(Session._meta.db_table)} WHERE {key} = %s AND {expires} > %s"
