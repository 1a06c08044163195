"""The verify pass: pages, then stored files, then chapters, each walked in keyset batches from a saved cursor.

Nothing is loaded whole: page rows come `BATCH` at a time ordered by the
(chapter, index) unique index, stored files in key order from the storage
(`upkeep.verify.listing`), chapters a batch of mangas at a time. After each
batch the findings, the counters and the cursor are saved in one
transaction, so a pass stopped anywhere (a deadline, a cancel, a kill)
resumes at the batch it was in, and a batch is never reported twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.storage import Storage, default_storage
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from catalog.models import Chapter, Page
from catalog.storage import open_stored
from reader.export import MANIFEST, stamp_of
from upkeep.models import VerifyFinding, VerifyRun
from upkeep.verify import decisions, stored_files
from upkeep.verify.listing import storage_kind, stored_keys

BATCH = 1000
MANGA_BATCH = 500
HASH_CHUNK = 1024 * 1024
Phase = VerifyRun.Phase
Kind = VerifyFinding.Kind
COUNTERS = ("pages", "hashed", "files", "mangas", "chapters", *Kind.values)


@dataclass
class Options:
    full: bool = False
    sample_pages: int = 0
    export_dir: str = ""


@dataclass
class Walk:
    """One pass's state while it runs: the run row, the storage, when to stop."""

    run: VerifyRun
    storage: Storage
    should_stop: Callable[[], bool]
    rate: float = 0.0
    rng: random.Random = field(default_factory=random.Random)


def start_or_resume(options: Options, *, restart: bool = False, storage: Storage | None = None) -> VerifyRun:
    """The unfinished run on this storage to resume (unless `restart`), or a new one with `options`."""
    storage = storage or default_storage
    kind = storage_kind(storage)
    if not restart:
        unfinished = VerifyRun.objects.filter(finished_at=None, storage=kind).order_by("-started_at", "-id").first()
        if unfinished is not None:
            return unfinished
    return VerifyRun.objects.create(
        storage=kind,
        full=options.full,
        sample_pages=options.sample_pages,
        export_dir=options.export_dir,
        counts=dict.fromkeys(COUNTERS, 0),
    )


def run_verify(
    run: VerifyRun,
    *,
    storage: Storage | None = None,
    deadline: float | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[VerifyRun], None] | None = None,
) -> bool:
    """Walk `run` on from its cursor; True when it reached the end, False when `deadline` (monotonic) or `cancel`
    stopped it (it resumes from the saved cursor)."""

    def should_stop() -> bool:
        return (cancel is not None and cancel.is_set()) or (deadline is not None and time.monotonic() >= deadline)

    walk = Walk(run, storage or default_storage, should_stop)
    phases: dict[str, Callable[[Walk], Iterator[None]]] = {
        Phase.PAGES: _pages,
        Phase.ORPHANS: _orphans,
        Phase.CHAPTERS: _chapters,
    }
    order = list(phases)
    while run.phase != Phase.DONE:
        for _ in phases[run.phase](walk):
            if progress is not None:
                progress(run)
            if should_stop():
                return False
        following = order.index(run.phase) + 1
        run.phase = order[following] if following < len(order) else Phase.DONE
        run.cursor = {}
        if run.phase == Phase.DONE:
            run.finished_at = timezone.now()
        run.save(update_fields=["phase", "cursor", "finished_at", "updated_at"])
    return True


def _save(walk: Walk, cursor: dict[str, Any], findings: list[VerifyFinding], counted: dict[str, int]) -> None:
    run = walk.run
    with transaction.atomic():
        for finding in findings:
            finding.run = run
        VerifyFinding.objects.bulk_create(findings)
        for name, value in counted.items():
            run.counts[name] = run.counts.get(name, 0) + value
        for finding in findings:
            run.counts[finding.kind] = run.counts.get(finding.kind, 0) + 1
        run.cursor = cursor
        run.save(update_fields=["cursor", "counts", "updated_at"])


# --- pages: is each row's file there, and (sampled or all) do its bytes still match? ---------------------------


def _pages(walk: Walk) -> Iterator[None]:
    run = walk.run
    estimate = Page.objects.count() if not run.full else 0
    walk.rate = decisions.sample_rate(run.sample_pages, estimate, full=run.full)
    after = run.cursor
    while True:
        rows = Page.objects.order_by("chapter_id", "index")
        if after:
            rows = rows.filter(
                Q(chapter_id__gt=after["chapter"]) | Q(chapter_id=after["chapter"], index__gt=after["index"])
            )
        batch = list(
            rows.values_list("id", "chapter_id", "index", "image", "sha256", "chapter__manga_id", "chapter__source_id")[
                :BATCH
            ]
        )
        if not batch:
            return
        findings, hashed = _check_pages(walk, batch)
        last = batch[-1]
        after = {"chapter": str(last[1]), "index": last[2]}
        _save(walk, after, findings, {"pages": len(batch), "hashed": hashed})
        yield


def _check_pages(walk: Walk, batch: list[tuple]) -> tuple[list[VerifyFinding], int]:
    # One listing per folder the batch's files live in (a chapter's pages share one), not a request per page.
    present: set[str] = set()
    for directory in dict.fromkeys(row[3].rpartition("/")[0] for row in batch):
        present.update(f"{directory}/{name}" for name in _listdir(walk.storage, directory))
    findings, hashed = [], 0
    for page_id, chapter_id, index, image, sha256, manga_id, source_id in batch:
        exists = image in present
        actual = None
        if exists and walk.rng.random() < walk.rate:
            actual = _sha256(walk.storage, image)
            hashed += 1
        verdict = decisions.page_verdict(exists=exists and actual != "", expected_sha256=sha256, actual_sha256=actual)
        if verdict is not decisions.PageVerdict.OK:
            findings.append(
                VerifyFinding(
                    kind=verdict.value,
                    source_id=source_id,
                    manga_id=manga_id,
                    chapter_id=chapter_id,
                    page_id=page_id,
                    name=image,
                    detail=f"page {index + 1}",
                )
            )
    return findings, hashed


def _listdir(storage: Storage, directory: str) -> list[str]:
    try:
        return storage.listdir(directory)[1]
    except FileNotFoundError:
        return []


def _sha256(storage: Storage, name: str) -> str:
    """The stored bytes' sha256, read in chunks; "" when the file vanished since the listing."""
    digest = hashlib.sha256()
    try:
        with open_stored(name, storage=storage) as stream:
            while chunk := stream.read(HASH_CHUNK):
                digest.update(chunk)
    except FileNotFoundError:
        return ""
    return digest.hexdigest()


# --- orphans: stored files (pages, covers, their scaled copies) that nothing names ------------------------------


def _orphans(walk: Walk) -> Iterator[None]:
    # The cursor is the last key listed; the prefixes are walked in key order, so it also says which prefix.
    after = walk.run.cursor.get("key", "")
    grace = settings.VERIFY_ORPHAN_GRACE_SECS
    for prefix in stored_files.prefixes_from(after):
        keys = stored_keys(walk.storage, prefix, after)
        while listed := list(islice(keys, BATCH)):
            names = [key for key, _ in listed]
            orphans = decisions.orphan_keys(listed, stored_files.named(names), now=time.time(), grace_secs=grace)
            findings = [
                VerifyFinding(kind=Kind.ORPHAN, name=key, **stored_files.finding_fields(key)) for key in orphans
            ]
            after = names[-1]
            _save(walk, {"key": after}, findings, {"files": len(listed)})
            yield


# --- chapters: gaps per source and manga, exports older than their chapter -----------------------------------


def _chapters(walk: Walk) -> Iterator[None]:
    from catalog.models import Manga

    places = _manifest(walk.run.export_dir)
    after = walk.run.cursor.get("manga")
    while True:
        mangas = Manga.objects.order_by("id")
        if after:
            mangas = mangas.filter(id__gt=after)
        ids = list(mangas.values_list("id", flat=True)[:MANGA_BATCH])
        if not ids:
            return
        # The change times are only read to judge exports: loading two timestamps a row costs a fifth of the pass.
        stamps = ("updated_at", "manga__updated_at") if places is not None else ()
        chapters = list(
            Chapter.objects.filter(manga_id__in=ids)
            .order_by("manga_id", "source_id")
            .values_list("id", "manga_id", "source_id", "kind", "volume", "number", "dropped_at", "sync_state", *stamps)
        )
        findings = _gap_findings(chapters)
        if places is not None:
            findings.extend(_stale_findings(Path(walk.run.export_dir), places, chapters))
        after = str(ids[-1])
        _save(walk, {"manga": after}, findings, {"mangas": len(ids), "chapters": len(chapters)})
        yield


def _gap_findings(chapters: list[tuple]) -> list[VerifyFinding]:
    by_manga: dict[Any, dict[str, list[decisions.ChapterFacts]]] = {}
    for chapter_id, manga_id, source_id, kind, volume, number, dropped_at, state, *_ in chapters:
        facts = decisions.ChapterFacts(
            chapter_id, kind, volume, number, listed=dropped_at is None, stored=state == Chapter.SyncState.DONE
        )
        by_manga.setdefault(manga_id, {}).setdefault(source_id, []).append(facts)
    findings = []
    for manga_id, by_source in by_manga.items():
        for source_id, facts in decisions.held_from_any_source(by_source).items():
            for gap in decisions.chapter_gaps(facts):
                volume = f"vol {gap.volume} " if gap.volume is not None else ""
                findings.append(
                    VerifyFinding(
                        kind=Kind.GAP,
                        source_id=source_id,
                        manga_id=manga_id,
                        chapter_id=gap.id,
                        detail=f"{gap.kind} {volume}{gap.number.normalize():f}",
                    )
                )
    return findings


def _manifest(export_dir: str) -> dict[str, str] | None:
    """Where `export_cbz` put each chapter (its manifest), or None when no export folder is checked."""
    if not export_dir:
        return None
    try:
        places = json.loads((Path(export_dir) / MANIFEST).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return places if isinstance(places, dict) else {}


def _stale_findings(root: Path, places: dict[str, str], chapters: list[tuple]) -> list[VerifyFinding]:
    findings = []
    for chapter_id, manga_id, source_id, _, _, _, dropped_at, state, updated_at, manga_updated_at in chapters:
        relative = places.get(str(chapter_id))
        if relative is None or dropped_at is not None or state != Chapter.SyncState.DONE:
            continue
        try:
            mtime: float | None = os.stat(root / relative).st_mtime
        except FileNotFoundError:
            mtime = None
        if decisions.export_stale(file_mtime=mtime, chapter_stamp=stamp_of(updated_at, manga_updated_at)):
            findings.append(
                VerifyFinding(
                    kind=Kind.STALE,
                    source_id=source_id,
                    manga_id=manga_id,
                    chapter_id=chapter_id,
                    name=relative,
                    detail="missing" if mtime is None else "older than its chapter",
                )
            )
    return findings
