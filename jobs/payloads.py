"""The typed payload base: one frozen dataclass per job kind, round-tripping through JSON.

Apps define their payloads as subclasses of `Payload` (`crawler.payloads`,
`analysis.payloads`) and register them as kinds (`jobs.kinds`). A payload
knows its kind, its dedup key (one in-flight job per key, enforced by the
`crawler_jobs_inflight_dedup` partial unique constraint) and which catalog
rows it names, so the queue can fill the job's denormalised columns without a
query. Decoding (`jobs.kinds.decode`, where the registry is) is strict: an
unknown kind or a malformed field raises `PayloadError`, which `queue.lease`
turns into a dead-lettered row.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, ClassVar


class PayloadError(ValueError):
    """A stored payload cannot be decoded into a known job kind."""


def _uuid(value: Any, field: str) -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    if not isinstance(value, str):
        raise PayloadError(f"field {field!r} must be a UUID string, got {type(value).__name__}")
    try:
        return uuid.UUID(value)
    except ValueError as exc:
        raise PayloadError(f"field {field!r} is not a valid UUID: {value!r}") from exc


def _str(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise PayloadError(f"field {field!r} must be a string, got {type(value).__name__}")
    return value


def _bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise PayloadError(f"field {field!r} must be a boolean, got {type(value).__name__}")
    return value


_DECODERS = {uuid.UUID: _uuid, str: _str, bool: _bool}


class Payload:
    """Base of every payload: subclasses are frozen dataclasses with a `kind` and a `dedup_key`."""

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            data[f.name] = str(value) if isinstance(value, uuid.UUID) else value
        return data

    def dedup_key(self) -> str:
        raise NotImplementedError

    def row_refs(self) -> dict[str, uuid.UUID | None]:
        """Catalog rows the payload names; the queue copies them onto the job row."""
        return {name: getattr(self, name, None) for name in ("manga_id", "chapter_id", "page_id")}

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            kind = _FIELD_TYPES[f.type] if isinstance(f.type, str) else f.type
            object.__setattr__(self, f.name, _DECODERS[kind](getattr(self, f.name), f.name))


_FIELD_TYPES: dict[str, type] = {"uuid.UUID": uuid.UUID, "str": str, "bool": bool}


def source_of(payload: Payload) -> str:
    """The source a job works for ("" for kinds with none, such as analyze_page): its `source_id` column."""
    return str(getattr(payload, "source_id", "") or "")
