"""What a full crawl of a theme fixture site must have stored, checked against the database and storage."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.management import call_command

from catalog.models import Chapter, Manga, MangaSource, Page, Source
from crawler.payloads import MetadataPass
from jobs import queue
from jobs.models import Job, JobState
from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga

# The fixture sites are ours, on this machine: crawl them briskly, not at a real site's polite 2 requests/s.
LOCAL_PACE: dict[str, Any] = {"rate_limit": 200, "burst": 50, "max_concurrency": 8}

# Relative dates ("2 days ago") are read against the crawler's clock, not the site's.
RELATIVE_TOLERANCE = dt.timedelta(minutes=10)


def drain_crawl_worker() -> None:
    """`manage.py crawl_worker --drain`: run crawl jobs until nothing is leasable or running."""
    call_command("crawl_worker", "--drain", "--no-schedule", "--workers", "2")


def crawl(source_id: str) -> None:
    """The production path: a queued metadata pass, then the crawl worker until the queue is empty."""
    queue.enqueue(MetadataPass(source_id=source_id))
    drain_crawl_worker()


def madara_source(site: Any, **settings: Any) -> Source:
    """The Source row for a Madara fixture site: the preset (at a local pace), plus any overriding keys."""
    return Source.objects.create(
        id="madara", name="Madara", base_url=site.base_url, settings={"preset": "madara", **LOCAL_PACE, **settings}
    )


def themesia_source(site: Any, **settings: Any) -> Source:
    """The Source row for a MangaThemesia fixture site: the preset, its CDN host and a local pace, plus overrides."""
    return Source.objects.create(
        id="themesia",
        name="Themesia",
        base_url=site.base_url,
        settings={"preset": "mangathemesia", "image_hosts": [site.cdn.host_port], **LOCAL_PACE, **settings},
    )


def madara_key(chapter: FixtureChapter) -> str:
    return f"manga/{chapter.manga_slug}/{chapter.slug}"


def themesia_key(chapter: FixtureChapter) -> str:
    return f"{chapter.manga_slug}-{chapter.slug}"


@dataclass(frozen=True)
class Stored:
    mangas: int
    covers: int
    chapters: int
    dates: int
    pages: int


def check_full_crawl(
    source_row: Source,
    catalog: list[FixtureManga],
    chapter_key: Callable[[FixtureChapter], str],
    *,
    relative_dates: bool,
    every_date_relative: bool = False,
    unprinted: frozenset[str] = frozenset(),
) -> Stored:
    """Assert every manga, cover, chapter (key, number, date) and page (bytes) of `catalog` is stored.

    `relative_dates`: the site prints new chapters' dates as "2 days ago" (Madara); otherwise every
    date is a calendar day, stored as its midnight UTC. `every_date_relative`: the site prints every
    date as whole days ago (ManhwaZ), so each is right to the day. `unprinted`: the fields the family's
    pages never print ("status", "tags", "alt_titles": FoOlSlide), which must then be stored empty.
    """
    dead = list(Job.objects.filter(state=JobState.DEAD).values_list("kind", "last_error"))
    assert dead == [], f"dead jobs: {dead}"
    links = {link.source_manga_key: link for link in MangaSource.objects.filter(source=source_row)}
    assert sorted(links) == sorted(m.slug for m in catalog)
    covers = chapters = dates = pages = 0
    for fixture in catalog:
        manga = Manga.objects.get(id=links[fixture.slug].manga_id)
        assert manga.title == fixture.title
        assert list(manga.alt_titles) == ([] if "alt_titles" in unprinted else list(fixture.alt_titles))
        assert list(manga.authors) == [fixture.author]
        assert manga.status == ("unknown" if "status" in unprinted else fixture.status)
        tags = [] if "tags" in unprinted else sorted(fixture.tags)
        assert sorted(manga.tags.values_list("name", flat=True)) == tags
        assert manga.description == fixture.description
        assert manga.cover_state == Manga.CoverState.STORED
        with manga.cover.open("rb") as handle:
            assert handle.read() == fixture.cover, f"cover of {fixture.slug} differs from what the site serves"
        covers += 1
        stored = {c.source_chapter_key: c for c in Chapter.objects.filter(manga=manga, source=source_row)}
        assert sorted(stored) == sorted(chapter_key(c) for c in fixture.chapters)
        for expected in fixture.chapters:
            chapter = stored[chapter_key(expected)]
            assert chapter.number == expected.number and chapter.title == expected.name
            assert chapter.published_at is not None, f"{chapter.source_chapter_key} has no date"
            if every_date_relative:
                assert abs(chapter.published_at - expected.published_at) < dt.timedelta(days=1)
            elif expected.relative and relative_dates:
                assert abs(chapter.published_at - expected.published_at) < RELATIVE_TOLERANCE
            else:
                midnight = dt.datetime.combine(expected.published_at.date(), dt.time(), dt.UTC)
                assert chapter.published_at == midnight
            dates += 1
            assert chapter.sync_state == Chapter.SyncState.DONE
            rows = list(Page.objects.filter(chapter=chapter).order_by("index"))
            assert [p.index for p in rows] == list(range(len(expected.pages)))
            for row, data in zip(rows, expected.pages, strict=True):
                with row.image.open("rb") as handle:
                    assert handle.read() == data, f"page {row.index} of {chapter.source_chapter_key} differs"
                pages += 1
            chapters += 1
    return Stored(mangas=len(links), covers=covers, chapters=chapters, dates=dates, pages=pages)
