"""Live status of one worker process: phase, active chapters, current cover, last pass.

Each worker process holds one `StatusHandle`. Pipeline code publishes into it
(`set_phase`, `begin_chapter`, `begin_cover`, `set_chapter_pages`); the
context managers clear their entry on success, exception and timeout alike.
Every change bumps a version and calls the registered listeners, which the
worker's publisher uses to write its `WorkerStatus` row (debounced) and
signal dashboards. The handle itself is pure memory and thread-safe, so tests
use it with no database.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from jobs.worker.status.phases import idle


@dataclass
class ActiveChapter:
    manga_id: str
    manga_title: str
    chapter_id: str
    chapter_number: str
    pages_done: int = 0
    pages_total: int | None = None
    chapter_label: str = ""  # "chapter 12" or an extra's "Side Story 3": what the dashboard shows


@dataclass(frozen=True)
class LastPass:
    at: str | None = None
    discovered: int = 0
    upserted: int = 0
    covers_fetched: int = 0
    mangas_failed: int = 0


@dataclass(frozen=True)
class StatusSnapshot:
    phase: dict[str, Any]
    worker_count: int
    active_chapters: list[dict[str, Any]]
    current_cover: dict[str, Any] | None
    last_pass: dict[str, Any]
    flags: dict[str, Any]
    version: int


class StatusHandle:
    def __init__(self, worker_count: int = 1) -> None:
        self._lock = threading.Lock()
        self._phase: dict[str, Any] = idle()
        self._worker_count = max(worker_count, 1)
        self._active: dict[str, ActiveChapter] = {}
        self._cover: dict[str, Any] | None = None
        self._last_pass = LastPass()
        self._flags: dict[str, Any] = {}
        self._version = 0
        self._listeners: list[Callable[[], None]] = []
        self._changed = threading.Condition(self._lock)

    # --- subscription -------------------------------------------------------------
    def add_listener(self, listener: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    def wait_for_change(self, seen_version: int, timeout: float) -> int:
        """Block until the version moves past `seen_version` (or timeout); returns the current version."""
        with self._changed:
            self._changed.wait_for(lambda: self._version != seen_version, timeout)
            return self._version

    def _bump_locked(self) -> list[Callable[[], None]]:
        self._version += 1
        self._changed.notify_all()
        return list(self._listeners)

    def _mutate(self, fn: Callable[[], None]) -> None:
        with self._lock:
            fn()
            listeners = self._bump_locked()
        for listener in listeners:
            listener()

    def poke(self) -> None:
        """Signal a change of something composed at read time (flags, queue counts)."""
        self._mutate(lambda: None)

    # --- writers --------------------------------------------------------------------
    def set_phase(self, phase: dict[str, Any]) -> None:
        def apply() -> None:
            self._phase = dict(phase)

        self._mutate(apply)

    def set_flag(self, name: str, value: Any) -> None:
        def apply() -> None:
            self._flags[name] = value

        self._mutate(apply)

    def record_pass(
        self, *, discovered: int, upserted: int, covers_fetched: int, mangas_failed: int, at: datetime
    ) -> None:
        def apply() -> None:
            self._last_pass = LastPass(at.isoformat(), discovered, upserted, covers_fetched, mangas_failed)

        self._mutate(apply)

    @contextmanager
    def begin_chapter(
        self, *, manga_id: Any, manga_title: str, chapter_id: Any, chapter_number: Any, chapter_label: str = ""
    ) -> Iterator[ActiveChapter]:
        """Show a chapter as downloading until the block exits, however it exits."""
        key = str(chapter_id)
        entry = ActiveChapter(str(manga_id), manga_title, key, str(chapter_number), chapter_label=chapter_label)

        def add() -> None:
            self._active[key] = entry

        def remove() -> None:
            self._active.pop(key, None)

        self._mutate(add)
        try:
            yield entry
        finally:
            self._mutate(remove)

    def set_chapter_pages(self, chapter_id: Any, done: int, total: int | None) -> None:
        def apply() -> None:
            entry = self._active.get(str(chapter_id))
            if entry is not None:
                entry.pages_done = done
                entry.pages_total = total

        self._mutate(apply)

    @contextmanager
    def begin_cover(self, *, manga_id: Any, manga_title: str) -> Iterator[None]:
        """Show a cover as downloading until the block exits.

        Last writer wins: the exit only clears the slot while it still holds
        this manga, so an overlapping newer cover is not clobbered.
        """
        target = {"manga_id": str(manga_id), "manga_title": manga_title}

        def set_cover() -> None:
            self._cover = target

        def clear() -> None:
            if self._cover is not None and self._cover["manga_id"] == target["manga_id"]:
                self._cover = None

        self._mutate(set_cover)
        try:
            yield
        finally:
            self._mutate(clear)

    # --- reader ---------------------------------------------------------------------
    def snapshot(self) -> StatusSnapshot:
        with self._lock:
            chapters = sorted(self._active.values(), key=lambda c: (float(c.chapter_number), c.chapter_id))
            return StatusSnapshot(
                phase=dict(self._phase),
                worker_count=self._worker_count,
                active_chapters=[asdict(c) for c in chapters],
                current_cover=dict(self._cover) if self._cover else None,
                last_pass=asdict(self._last_pass),
                flags=dict(self._flags),
                version=self._version,
            )
