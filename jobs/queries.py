"""The queue's named statements (`queries.sql`), read once, and the one way they run.

Every hot statement of the queue is written once, whole, in `queries.sql`,
with its SQLite variant beside it where the text must differ; callers choose
a statement by name and pass named parameters, nothing is assembled at call
time. `run` executes the variant for the default database: on PostgreSQL the
whole block in one round trip (with its planner settings off around it), on
SQLite each of its statements in one transaction.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

SOURCE = Path(__file__).with_name("queries.sql")
DIALECTS = ("postgresql", "sqlite")
_DIRECTIVE = re.compile(r"^-- (name|dialect|planner off|same as): *(.+?) *$")


@dataclass(frozen=True)
class Statement:
    """One named statement for one dialect ("" for both): its parts, run in order, and planner settings to turn off."""

    name: str
    dialect: str
    parts: tuple[str, ...]
    planner_off: tuple[str, ...] = ()

    @property
    def sql(self) -> str:
        """The statement alone, without the planner settings around it (what an EXPLAIN reads)."""
        return ";\n".join(self.parts)

    @functools.cached_property
    def wrapped(self) -> str:
        """The statement with its planner settings off around it, as one text PostgreSQL runs in one round trip."""
        return wrap(self.sql, self.planner_off)


def wrap(sql: str, planner_off: tuple[str, ...]) -> str:
    """`sql` with each setting SET LOCAL off before it and put back after it (also inside a transaction)."""
    before = "".join(f"SET LOCAL {name} = off;\n" for name in planner_off)
    after = "".join(f";\nSET LOCAL {name} TO DEFAULT" for name in planner_off)
    return f"{before}{sql}{after}"


def parse(text: str) -> dict[tuple[str, str], Statement]:
    """The statements of a `queries.sql` text by (name, dialect); ValueError for a block it cannot read."""
    blocks: list[dict[str, Any]] = []
    for line in text.splitlines():
        directive = _DIRECTIVE.match(line)
        if directive and directive.group(1) == "name":
            blocks.append({"name": directive.group(2), "dialect": "", "lines": []})
        elif directive and blocks:
            blocks[-1][directive.group(1)] = directive.group(2)
        elif blocks and not line.startswith("--"):
            blocks[-1]["lines"].append(line)
    statements: dict[tuple[str, str], Statement] = {}
    for block in blocks:
        key = (block["name"], block["dialect"])
        if block["dialect"] not in ("", *DIALECTS) or key in statements:
            raise ValueError(f"statement {key} is written twice or names an unknown dialect")
        if "same as" in block:
            statements[key] = statements[(block["same as"], block["dialect"])]
            continue
        body = "\n".join(block["lines"]).strip()
        parts = tuple(part.strip() for part in re.split(r";\s*$", body, flags=re.M) if part.strip())
        if not parts:
            raise ValueError(f"statement {key} is empty")
        off = tuple(name.strip() for name in block.get("planner off", "").split(",") if name.strip())
        statements[key] = Statement(block["name"], block["dialect"], parts, off)
    return statements


@functools.cache
def statements() -> dict[tuple[str, str], Statement]:
    return parse(SOURCE.read_text())


def statement(name: str, dialect: str | None = None) -> Statement:
    """The statement `name` for `dialect` (the default database's when None): its variant, else the shared one."""
    dialect = dialect or connection.vendor
    found = statements().get((name, dialect)) or statements().get((name, ""))
    if found is None:
        raise LookupError(f"no statement {name!r} for {dialect}")
    return found


def run(name: str, params: Mapping[str, Any]) -> list[tuple]:
    """Run the statement `name` on the default database; every row it returns (of each part, in order)."""
    found = statement(name)
    bound = {key: _adapt(value) for key, value in params.items()}
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(found.wrapped, bound)
            return _all_rows(cursor)
        if len(found.parts) == 1:
            cursor.execute(found.parts[0], bound)
            return cursor.fetchall() if cursor.description else []
        rows: list[tuple] = []
        with transaction.atomic():
            for part in found.parts:
                cursor.execute(part, bound)
                rows += cursor.fetchall() if cursor.description else []
        return rows


def execute(name: str, params: Mapping[str, Any]) -> int:
    """Run the one-statement `name` for its row count (a write that returns no rows)."""
    found = statement(name)
    with connection.cursor() as cursor:
        cursor.execute(found.wrapped, {key: _adapt(value) for key, value in params.items()})
        return cursor.rowcount


def _all_rows(cursor: Any) -> list[tuple]:
    """The rows of every result of a multi-statement execute (the planner SETs return none)."""
    rows: list[tuple] = []
    while True:
        if cursor.description is not None:
            rows += cursor.fetchall()
        if not cursor.nextset():
            return rows


def explain_with_settings(statement_: Statement) -> Any:
    """A fetcher that runs an EXPLAIN of `statement_` with its planner settings off (`testsupport.plans`)."""

    def fetch(cursor: Any, sql: str, params: dict[str, Any]) -> list[tuple]:
        cursor.execute(wrap(sql, statement_.planner_off), params)
        return _all_rows(cursor)

    return fetch


def _adapt(value: Any) -> Any:
    """A datetime or uuid as the default database stores it (SQLite: UTC text, 32 hex digits); anything else as it is."""
    if isinstance(value, datetime):
        return connection.ops.adapt_datetimefield_value(value)
    if connection.vendor != "postgresql" and isinstance(value, uuid.UUID | timedelta):
        # SQLite binds neither; a duration is only PostgreSQL's (SQLite's statements get the time it ends).
        return value.hex if isinstance(value, uuid.UUID) else value.total_seconds()
    return value


# --- parameters ------------------------------------------------------------------


def array(values: Iterable[uuid.UUID | int | str]) -> str:
    """A list parameter in the default database's form: a PostgreSQL array literal, or a JSON array on SQLite.

    Django's cursor binds client-side and quotes a list element by element;
    for the ids of every ack and lease that was a fifth of the loop's CPU.
    Neither an integer nor a uuid's 32 hex digits (which PostgreSQL reads as
    a uuid, and which is how Django stores one in SQLite) needs quoting.
    """
    if connection.vendor != "postgresql":
        return json.dumps([v.hex if isinstance(v, uuid.UUID) else v for v in values])
    return "{" + ",".join(_pg_element(v) for v in values) + "}"


def _pg_element(value: uuid.UUID | int | str) -> str:
    if isinstance(value, uuid.UUID):
        return value.hex
    if isinstance(value, int):
        return str(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def clock(duration: timedelta = timedelta(0)) -> dict[str, Any]:
    """The time parameters: PostgreSQL's statements read its clock and take `duration`; SQLite's get `now`."""
    now = timezone.now()
    return {"now": now, "duration": duration, "leased_until": now + duration}


def as_uuid(value: Any) -> uuid.UUID:
    """A uuid column's value as a raw cursor returns it (a UUID on PostgreSQL, 32 hex digits on SQLite)."""
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def stored_time(value: datetime) -> str:
    """`value` as text the default database stores for a datetime (SQLite's UTC text), for a JSON document."""
    return str(_adapt(value))
