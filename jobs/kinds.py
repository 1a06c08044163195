"""The kind registry: what each app runs on the engine, declared from its `AppConfig.ready()`.

The queue and the worker loop know no kind by name. An app registers a `Kind`
for each of its payload classes: the handler a worker runs it with, the
worker role that leases it (`crawl`, `analyze`, ...) and, when it differs
from JOBS_JOB_TIMEOUT_SECS, its own timeout. Decoding a leased row looks
its payload class up here, so a kind nobody registered is dead-lettered with
"unknown job kind" instead of reaching a handler.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from jobs.payloads import Payload, PayloadError

Handler = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Kind:
    payload: type[Payload]
    # handler(payload, context): its return is done, its exception is judged by `jobs.worker.outcomes`.
    handler: Handler
    role: str
    # Seconds a job of this kind may run before it is cancelled and failed; None: JOBS_JOB_TIMEOUT_SECS.
    timeout_secs: float | None = None

    @property
    def name(self) -> str:
        return self.payload.kind


_kinds: dict[str, Kind] = {}


def register(*kinds: Kind) -> None:
    """Declare `kinds`; registering a kind again replaces it (tests swap handlers this way)."""
    for kind in kinds:
        _kinds[kind.name] = kind


def payload_type(name: str) -> type[Payload] | None:
    kind = _kinds.get(name)
    return kind.payload if kind is not None else None


def registered() -> dict[str, Kind]:
    """Every registered kind by name, in registration order."""
    return dict(_kinds)


def names() -> tuple[str, ...]:
    return tuple(_kinds)


def for_role(role: str) -> dict[str, Kind]:
    """The kinds `role` leases; an error naming the role when no app registered any."""
    kinds = {name: kind for name, kind in _kinds.items() if kind.role == role}
    if not kinds:
        raise ImproperlyConfigured(
            f"no job kinds are registered for the {role!r} worker role: is the app that provides them in INSTALLED_APPS?"
        )
    return kinds


def decode(data: Any) -> Payload:
    """Decode a stored payload into its registered kind; raise `PayloadError` naming what is wrong."""
    if not isinstance(data, dict):
        raise PayloadError(f"payload must be a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    cls = payload_type(kind) if isinstance(kind, str) else None
    if cls is None:
        raise PayloadError(f"unknown job kind {kind!r}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            kwargs[f.name] = data[f.name]
        elif f.default is dataclasses.MISSING:
            raise PayloadError(f"{kind} payload is missing field {f.name!r}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise PayloadError(f"{kind} payload is malformed: {exc}") from exc
