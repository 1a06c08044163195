"""Start-up failures as one line on stderr and exit status 2, instead of a 30-90 line traceback.

Two kinds of mistakes stop a fresh install before anything runs: a setting
that does not parse (settings.py names the variable, the value and what is
accepted) and a database that cannot be reached or does not exist. Both are
the operator's to fix, so they get one line that says how; anything else is
a bug and keeps its traceback.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

EXIT_CONFIG = 2

# What psycopg and sqlite3 say when the connection itself fails (not a query on a live one).
_CONNECT_FAILURES = ("connection failed", "connection to server", "could not connect", "unable to open database file")


# libpq's "connection to server at "h", port 5432 failed: FATAL:  " wrapping: the label already says where.
_LIBPQ_PREFIX = re.compile(r'(connection failed: |connection to server at "[^"]*"(, port \d+)? failed: |FATAL:\s+)')


def database_label(db: dict[str, Any]) -> str:
    """`postgres://user@host:port/name` (no password) or the SQLite file, for the operator's eyes."""
    if "sqlite" in db.get("ENGINE", ""):
        return f"the SQLite database {db.get('NAME')}"
    user = f"{db['USER']}@" if db.get("USER") else ""
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{user}{db.get('HOST') or 'localhost'}{port}/{db.get('NAME')}"


def connection_failure(exc: BaseException, db: dict[str, Any]) -> str | None:
    """The one-line message for a failed database connection, or None when `exc` is something else."""
    text = str(exc).strip()
    if not any(marker in text.lower() for marker in _CONNECT_FAILURES):
        return None
    reason = _LIBPQ_PREFIX.sub("", " ".join(line.strip() for line in text.splitlines()))
    name = db.get("NAME")
    if "does not exist" in text:
        hint = f"createdb {name}?"
    elif "sqlite" in db.get("ENGINE", ""):
        hint = "is MANGALORD_DATA_DIR writable?"
    else:
        hint = f"is PostgreSQL running there? then: createdb {name}"
    return f"cannot connect to {database_label(db)} (DATABASE_URL): {reason} ({hint})"


def fail(message: str) -> NoReturn:
    print(f"mangalord: {message}", file=sys.stderr)
    raise SystemExit(EXIT_CONFIG)


def load_settings() -> None:
    """Import the settings now, turning a bad variable into one line and exit status 2."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018 - the import that reads and checks every variable
    except ImproperlyConfigured as exc:
        fail(str(exc))


def run(main: Callable[[], Any]) -> Any:
    """Run `main` after the settings load, with a failed database connection reported as one line."""
    from django.db.utils import OperationalError

    load_settings()
    try:
        return main()
    except OperationalError as exc:
        from django.db import connection

        message = connection_failure(exc, connection.settings_dict)
        if message is None:
            raise
        fail(message)
