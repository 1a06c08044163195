"""Typed job payloads: one frozen record per job kind, round-tripping through JSON.

A payload knows its kind, its dedup key (one in-flight job per key, enforced by
the `crawler_jobs_inflight_dedup` partial unique constraint) and which catalog
rows it names, so the queue can fill the job's denormalised columns without a
query. Decoding is strict: an unknown kind or a malformed field raises
`PayloadError`, which `queue.lease` turns into a dead-lettered row.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar, Union


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


class _Payload:
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


@dataclass(frozen=True)
class SyncManga(_Payload):
    """Fetch one manga's detail page, upsert metadata, sync its chapter list.

    `url` and `title` come from the list ref so the worker can rebuild it
    without re-walking and the dead-jobs UI can label a manga that has no row
    yet; they default to "" so older rows still decode.
    """

    kind: ClassVar[str] = "sync_manga"
    source_id: str
    source_manga_key: str
    url: str = ""
    title: str = ""

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.source_id}:{self.source_manga_key}"


@dataclass(frozen=True)
class SyncChapterList(_Payload):
    """Diff the chapter list, enqueue content jobs for new chapters, soft-drop vanished ones."""

    kind: ClassVar[str] = "sync_chapter_list"
    source_id: str
    manga_id: uuid.UUID
    source_manga_key: str

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.manga_id}"


@dataclass(frozen=True)
class SyncChapterContent(_Payload):
    """Download one chapter's page images into storage."""

    kind: ClassVar[str] = "sync_chapter_content"
    source_id: str
    chapter_id: uuid.UUID
    source_chapter_key: str

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.chapter_id}"


@dataclass(frozen=True)
class AnalyzePage(_Payload):
    """Run AI analysis on one page; `force` re-analyses a page that is already done."""

    kind: ClassVar[str] = "analyze_page"
    page_id: uuid.UUID
    force: bool = False

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.page_id}"


@dataclass(frozen=True)
class MetadataPass(_Payload):
    """Run a newest-first metadata pass over one source (one in flight per source)."""

    kind: ClassVar[str] = "metadata_pass"
    source_id: str

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.source_id}"


@dataclass(frozen=True)
class Reconcile(_Payload):
    """Run a list-only reconcile pass over one source (one in flight per source)."""

    kind: ClassVar[str] = "reconcile"
    source_id: str

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.source_id}"


Payload = Union[SyncManga, SyncChapterList, SyncChapterContent, AnalyzePage, MetadataPass, Reconcile]

PAYLOAD_TYPES: dict[str, type[_Payload]] = {
    cls.kind: cls for cls in (SyncManga, SyncChapterList, SyncChapterContent, AnalyzePage, MetadataPass, Reconcile)
}
KINDS: tuple[str, ...] = tuple(PAYLOAD_TYPES)


def decode(data: Any) -> Payload:
    """Decode a stored payload; raise `PayloadError` naming what is wrong."""
    if not isinstance(data, dict):
        raise PayloadError(f"payload must be a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    cls = PAYLOAD_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise PayloadError(f"unknown job kind {kind!r}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            kwargs[f.name] = data[f.name]
        elif f.default is dataclasses.MISSING:
            raise PayloadError(f"{kind} payload is missing field {f.name!r}")
    try:
        return cls(**kwargs)  # type: ignore[return-value]
    except TypeError as exc:
        raise PayloadError(f"{kind} payload is malformed: {exc}") from exc
