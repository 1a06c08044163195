"""Environment variables that were renamed: the old name is still read for one release, with a warning.

The job engine's settings were CRAWLER_* when the engine lived in the
crawler; they are JOBS_* now. A deployment whose unit or `.env` still says
CRAWLER_LEASE_SECS keeps working and is told the new name. Both names set
to different values is refused: which one was meant cannot be guessed.
`resolve` is pure (environment in, environment and warnings out); the
settings apply it to `os.environ` before reading any value.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

# New name -> the name it replaces, accepted until the release after next.
RENAMED: dict[str, str] = {
    "JOBS_JOB_TIMEOUT_SECS": "CRAWLER_JOB_TIMEOUT_SECS",
    "JOBS_WORKERS": "CRAWLER_WORKERS",
    "JOBS_LEASE_SECS": "CRAWLER_LEASE_SECS",
    "JOBS_HEARTBEAT_SECS": "CRAWLER_HEARTBEAT_SECS",
    "JOBS_MAX_ATTEMPTS": "CRAWLER_MAX_ATTEMPTS",
    "JOBS_MAX_DEFERRALS": "CRAWLER_MAX_DEFERRALS",
    "JOBS_DONE_RETENTION_DAYS": "CRAWLER_DONE_RETENTION_DAYS",
    "JOBS_CIRCUIT_BREAKER_THRESHOLD": "CRAWLER_CIRCUIT_BREAKER_THRESHOLD",
    "JOBS_CIRCUIT_BREAKER_COOLDOWN_SECS": "CRAWLER_CIRCUIT_BREAKER_COOLDOWN_SECS",
    "JOBS_CONN_MAX_AGE_SECS": "CRAWLER_CONN_MAX_AGE_SECS",
    "JOBS_POLL_SECS": "CRAWLER_POLL_SECS",
}


class RenamedSettingWarning(FutureWarning):
    """An old setting name was read: shown by default, since operators, not developers, must act on it."""


def resolve(environ: Mapping[str, str], renamed: Mapping[str, str] = RENAMED) -> tuple[dict[str, str], list[str]]:
    """The values to read under the new names, and one warning per old name still in use.

    The new name wins when both are set to the same value (the old one is
    then only warned about); set to different values, both are named in an
    ImproperlyConfigured.
    """
    values: dict[str, str] = {}
    warnings: list[str] = []
    for new, old in renamed.items():
        if old not in environ:
            continue
        if new in environ and environ[new] != environ[old]:
            raise ImproperlyConfigured(
                f"Both {new}={environ[new]!r} and {old}={environ[old]!r} are set: {old} is the old name of "
                f"{new}; keep only {new}"
            )
        warnings.append(f"{old} is deprecated and will stop being read in the next release: rename it to {new}")
        values[new] = environ[old]
    return values, warnings
