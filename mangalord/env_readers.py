"""Readers of environment variables for the settings: each value parsed strictly, each mistake one line.

A value that does not parse raises ImproperlyConfigured naming the variable, the value as written (a database
password masked) and what is accepted; `manage.py` prints that line and exits 2 (mangalord.startup).
"""

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()


PASSWORD_IN_URL = re.compile(r"(://[^:/@]*:)[^@]*@")


def invalid(name: str, rule: str) -> ImproperlyConfigured:
    """The one-line start-up error: the variable, the value as written, what is accepted (manage.py prints it)."""
    value = PASSWORD_IN_URL.sub(r"\1***@", os.environ.get(name, ""))  # never print a database password
    return ImproperlyConfigured(f"Invalid value for environment variable {name}={value!r}: {rule}")


# What each parser accepts, for values that do not even parse (`JOBS_POLL_SECS=soon`).
ACCEPTS = {
    environ.Env.int: "must be an integer",
    environ.Env.float: "must be a number",
    environ.Env.list: "must be a comma-separated list",
}


def read(
    name: str, parse: Callable[..., Any], default: Any, check: Callable[[Any], bool] | None = None, rule: str = ""
) -> Any:
    try:
        value = parse(name, default=default)
    except (ValueError, TypeError, ImproperlyConfigured) as exc:
        raise invalid(name, rule or ACCEPTS.get(getattr(parse, "__func__", parse), str(exc))) from exc
    if check is not None and not check(value):
        raise invalid(name, rule)
    return value


TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


def strict_bool(name: str, default: bool = False) -> bool:
    # django-environ reads any unknown word as False; a typo such as
    # DEBUG=ture must fail instead of silently meaning the opposite.
    raw = env.str(name, default=str(default)).strip().lower()
    if raw in TRUE_WORDS:
        return True
    if raw in FALSE_WORDS:
        return False
    raise ValueError("must be a boolean: true/false, 1/0, yes/no or on/off")


def positive(name: str, default: int) -> int:
    return read(name, env.int, default, lambda v: v > 0, "must be a positive integer")


def non_negative(name: str, default: int) -> int:
    return read(name, env.int, default, lambda v: v >= 0, "must be zero or a positive integer")


def path(name: str, default: Path, *, under: Path) -> Path:
    """A path setting; a relative one is taken under `under`, never under whatever directory the process runs in."""
    return (under / Path(read(name, env.str, str(default))).expanduser()).resolve()


RATE_SYNTAX = re.compile(r"^[0-9]+/(s|sec|second|m|min|minute|h|hour|d|day)$")


def rate(name: str, default: str) -> str:
    return read(name, env.str, default, lambda v: bool(RATE_SYNTAX.match(v)), "must be a rate such as 10/minute")


def is_postgres_url(url: str) -> bool:
    try:
        config = environ.Env.db_url_config(url)
    except (ValueError, TypeError, ImproperlyConfigured):
        return False
    return config.get("ENGINE") == "django.db.backends.postgresql" and bool(config.get("NAME"))


def networks(name: str, default: str) -> tuple[Any, ...]:
    """A comma-separated list of IP networks (`127.0.0.1/32,::1/128`); the error names the entry at fault."""
    from fetch.addresses import parse_networks

    raw = env.str(name, default=default)
    try:
        return parse_networks(raw)
    except ValueError as exc:
        raise invalid(name, f"must be comma-separated IP networks like 127.0.0.1/32,::1/128: {exc}") from exc
