"""A big site's rows, generated inside PostgreSQL (INSERT … SELECT generate_series): no row crosses the wire.

Shape, for `mangas` = M (the other counts follow it, as on a real aggregator
after the first metadata pass):

- source `big` with M mangas of 15 chapters each (15 M chapters), plus one
  manga of 2,000 chapters (`LONG_MANGA_ID`); source `small` with 20 mangas;
- 10 M pending `sync_chapter_content` jobs of `big` (one per chapter, in
  chapter order), 200 pending jobs of `small` and 100 pending `analyze_page`
  jobs queued after them (what the other sources and the analyze worker wait
  behind);
- 20 M done jobs, changed over the last six days, plus 1,000 done jobs past the
  reaper's 7-day retention (so `reap` always has the same work);
- 10,000 dead jobs (the requeue-all case), one per chapter with no job in flight;
- series (docs/series.md): each manga of `big` is one series with `copies` - 1
  more copies of it crawled from mirror sources (`mirror-1`, `mirror-2`: the
  same title and 15 chapters, listed but not downloaded, since a series
  downloads each chapter once), so the default is M mangas x 3 sources.

Titles are "<Word> <word> <n>" (`title`). The searches look for the end of
one manga's title, which names that manga alone at every size and whose jobs
are the same at every size (`searched_term`, `dead_searched_term`): the
answer stays put while the table around it grows, as when an operator looks
for one series. Ids are md5-derived, so every run and size names the same
rows the same way.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from hashlib import md5

CHAPTERS_PER_MANGA = 15
LONG_MANGA_CHAPTERS = 2_000
SMALL_SOURCE_MANGAS = 20
SMALL_SOURCE_JOBS = 200
ANALYZE_JOBS = 100
DEAD_JOBS = 10_000
EXPIRED_DONE_JOBS = 1_000
WORDS = ("dragon", "sword", "moon", "river", "school", "demon", "garden", "star", "ghost", "kitchen")


def row_id(kind: str, n: int) -> uuid.UUID:
    """The id the seed gives row `n` of `kind` (same as SQL's md5(kind || '-' || n)::uuid)."""
    return uuid.UUID(md5(f"{kind}-{n}".encode()).hexdigest())


LONG_MANGA_ID = row_id("long-manga", 0)

# Its 15 chapters are queued and each was downloaded twice before at every size: 15 pending + 30 done jobs.
SEARCHED_MANGA = 2_424


def title(n: int) -> str:
    """Manga `n`'s title, as `_MANGAS` writes it."""
    return f"{WORDS[n % 10].capitalize()} {WORDS[(n // 10) % 10]} {n}"


def searched_term(n: int) -> str:
    """The end of manga `n`'s title: "moon 2424" is in no other title ("Moon school 24240" has another word)."""
    return title(n).split(" ", 1)[1]


@dataclass(frozen=True)
class Size:
    mangas: int
    copies: int = 3  # sources each manga of `big` is crawled from, grouped into one series

    @property
    def label(self) -> str:
        return f"{self.mangas // 1000}k" if self.mangas % 1000 == 0 else str(self.mangas)

    @property
    def chapters(self) -> int:
        return self.mangas * CHAPTERS_PER_MANGA

    @property
    def pending(self) -> int:
        return self.mangas * 10

    @property
    def done(self) -> int:
        return self.mangas * 20

    @property
    def dead_manga(self) -> int:
        """The first manga whose 15 chapters all have a dead job (and one done job each) at this size."""
        return -(-self.pending // CHAPTERS_PER_MANGA)

    @property
    def copy_mangas(self) -> int:
        """The mirror sources' copies: every manga of `big` (not `small`'s) once per extra source."""
        return (self.mangas - SMALL_SOURCE_MANGAS) * (self.copies - 1)

    def describe(self) -> str:
        return (
            f"{self.mangas:,} mangas x {self.copies} sources ({self.mangas + self.copy_mangas:,} manga rows), "
            f"{self.chapters + LONG_MANGA_CHAPTERS + self.copy_mangas * CHAPTERS_PER_MANGA:,} chapters, "
            f"{self.pending:,} pending + {self.done + EXPIRED_DONE_JOBS:,} done + {DEAD_JOBS:,} dead jobs"
        )


_WORD_ARRAY = "ARRAY[" + ", ".join(f"'{w}'" for w in WORDS) + "]"

_SOURCES = """
INSERT INTO catalog_source (id, name, kind, base_url, enabled, settings, created_at, updated_at)
VALUES ('big', 'Big aggregator', 'html', 'http://big.invalid/', true, '{}', now(), now()),
       ('small', 'Small site', 'html', 'http://small.invalid/', true, '{}', now(), now())
"""

# Each manga's series, under the manga's id (as catalog migration 0010 gives existing mangas theirs).
_SERIES = f"""
INSERT INTO catalog_series (id, title, source_order, merged_into_id, created_at, updated_at)
SELECT md5('manga-' || i)::uuid,
       initcap(({_WORD_ARRAY})[1 + i %% 10]) || ' ' || ({_WORD_ARRAY})[1 + (i / 10) %% 10] || ' ' || i,
       '[]', NULL, now() - i * interval '1 second', now() - i * interval '1 second'
  FROM generate_series(0, %(mangas)s - 1) AS i;
INSERT INTO catalog_series (id, title, source_order, merged_into_id, created_at, updated_at)
VALUES (%(long_id)s, 'The long one', '[]', NULL, now(), now())
"""

_MANGAS = f"""
INSERT INTO catalog_manga (id, series_id, leads_series, title, alt_titles, description, authors, status, cover,
                           cover_url, cover_state, metadata_hash, latest_chapter_at, created_at, updated_at)
SELECT md5('manga-' || i)::uuid, md5('manga-' || i)::uuid, TRUE,
       initcap(({_WORD_ARRAY})[1 + i %% 10]) || ' ' || ({_WORD_ARRAY})[1 + (i / 10) %% 10] || ' ' || i,
       '[]', '', '[]', 'ongoing', '', '', CASE WHEN i %% 10 = 0 THEN 'missing' ELSE 'stored' END, '',
       CASE WHEN i %% 20 = 0 THEN NULL ELSE now() - (i %% 100000) * interval '1 minute' END,
       now() - i * interval '1 second', now() - i * interval '1 second'
  FROM generate_series(0, %(mangas)s - 1) AS i
"""

_LONG_MANGA = """
INSERT INTO catalog_manga (id, series_id, leads_series, title, alt_titles, description, authors, status, cover,
                           cover_url, cover_state, metadata_hash, latest_chapter_at, created_at, updated_at)
VALUES (%(long_id)s, %(long_id)s, TRUE, 'The long one', '[]', '', '[]', 'ongoing', '', '', 'stored', '', now(), now(), now())
"""

_MANGA_SOURCES = """
INSERT INTO catalog_mangasource (id, manga_id, source_id, source_manga_key, url, created_at, updated_at)
SELECT md5('manga-source-' || i)::uuid, md5('manga-' || i)::uuid,
       CASE WHEN i < %(small)s THEN 'small' ELSE 'big' END, 'm-' || i, '', now(), now()
  FROM generate_series(0, %(mangas)s - 1) AS i
"""

# Chapter j belongs to manga j / 15 and is number j % 15 + 1. The chapters with
# a pending job (j < pending) are queued; the rest are downloaded.
_CHAPTERS = f"""
INSERT INTO catalog_chapter (id, manga_id, source_id, source_chapter_key, number, title, url, sync_state,
                             page_count, created_at, updated_at)
SELECT md5('chapter-' || j)::uuid, md5('manga-' || (j / {CHAPTERS_PER_MANGA}))::uuid, 'big', 'c-' || j,
       j %% {CHAPTERS_PER_MANGA} + 1, '', '', CASE WHEN j < %(pending)s THEN 'queued' ELSE 'done' END,
       CASE WHEN j < %(pending)s THEN 0 ELSE 20 END,
       now() - j * interval '1 millisecond', now() - j * interval '1 millisecond'
  FROM generate_series(0, %(chapters)s - 1) AS j
"""

_LONG_CHAPTERS = """
INSERT INTO catalog_chapter (id, manga_id, source_id, source_chapter_key, number, title, url, sync_state,
                             page_count, created_at, updated_at)
SELECT md5('long-chapter-' || n)::uuid, %(long_id)s, 'big', 'long-' || n, n, '', '', 'done', 20, now(), now()
  FROM generate_series(1, %(long)s) AS n
"""


# The mirrors' copies: copy c (1..copies-1) of manga i is md5('copy-c-i'), in manga i's series, same title,
# the same 15 chapters listed but not downloaded (the series downloads each chapter once, from `big`).
_COPY_SOURCES = """
INSERT INTO catalog_source (id, name, kind, base_url, enabled, settings, created_at, updated_at)
SELECT 'mirror-' || c, 'Mirror ' || c, 'html', 'http://mirror-' || c || '.invalid/', true, '{}', now(), now()
  FROM generate_series(1, %(copies)s - 1) AS c
"""

_COPY_MANGAS = """
INSERT INTO catalog_manga (id, series_id, title, alt_titles, description, authors, status, cover, cover_url,
                           cover_state, metadata_hash, latest_chapter_at, created_at, updated_at)
SELECT md5('copy-' || c || '-' || i)::uuid, m.series_id, m.title, '[]', '', '[]', 'ongoing', '', '', 'missing', '',
       m.latest_chapter_at, m.created_at, m.updated_at
  FROM generate_series(1, %(copies)s - 1) AS c, generate_series(%(small)s, %(mangas)s - 1) AS i,
       LATERAL (SELECT series_id, title, latest_chapter_at, created_at, updated_at
                  FROM catalog_manga WHERE id = md5('manga-' || i)::uuid) AS m;
INSERT INTO catalog_mangasource (id, manga_id, source_id, source_manga_key, url, created_at, updated_at)
SELECT md5('copy-source-' || c || '-' || i)::uuid, md5('copy-' || c || '-' || i)::uuid, 'mirror-' || c, 'm-' || i,
       '', now(), now()
  FROM generate_series(1, %(copies)s - 1) AS c, generate_series(%(small)s, %(mangas)s - 1) AS i
"""

_COPY_CHAPTERS = f"""
INSERT INTO catalog_chapter (id, manga_id, source_id, source_chapter_key, number, title, url, sync_state,
                             page_count, created_at, updated_at)
SELECT md5('copy-chapter-' || c || '-' || j)::uuid, md5('copy-' || c || '-' || (j / {CHAPTERS_PER_MANGA}))::uuid,
       'mirror-' || c, 'c-' || j, j %% {CHAPTERS_PER_MANGA} + 1, '', '', 'new', 0, now(), now()
  FROM generate_series(1, %(copies)s - 1) AS c,
       generate_series(%(small)s * {CHAPTERS_PER_MANGA}, %(chapters)s - 1) AS j
"""


def _job_insert(select: str) -> str:
    return f"""
INSERT INTO crawler_jobs (id, kind, payload, state, attempts, max_attempts, deferrals, lease_generation,
                          leased_until, scheduled_at, created_at, updated_at, last_error, dedup_key,
                          manga_id, chapter_id, page_id, source_id)
{select}"""


def _content_job(name: str, state: str, chapter: str, error: str = "''") -> str:
    """SELECT list of job `name`-k, a sync_chapter_content job of source `big` on chapter `chapter`, at time t."""
    return f"""
SELECT md5('job-{name}-' || k)::uuid, 'sync_chapter_content',
       jsonb_build_object('kind', 'sync_chapter_content', 'source_id', 'big',
                          'chapter_id', md5('chapter-' || ({chapter}))::uuid::text,
                          'source_chapter_key', 'c-' || ({chapter})),
       '{state}', CASE WHEN '{state}' = 'pending' THEN 0 ELSE 1 END, 5, 0, 0, NULL, t, t, t, {error},
       'sync_chapter_content:' || md5('chapter-' || ({chapter}))::uuid::text,
       NULL, md5('chapter-' || ({chapter}))::uuid, NULL, 'big'"""


_PENDING_JOBS = _job_insert(
    _content_job("pending", "pending", "k")
    + """
  FROM generate_series(0, %(pending)s - 1) AS k,
       LATERAL (SELECT now() - interval '2 days' + k * interval '10 microseconds' AS t) AS at"""
)

# Done rows name chapters round-robin (a chapter downloaded, re-downloaded…):
# the in-flight dedup constraint does not cover done rows.
_DONE_JOBS = _job_insert(
    _content_job("done", "done", "k %% %(chapters)s")
    + """
  FROM generate_series(0, %(done)s - 1) AS k,
       LATERAL (SELECT now() - (k %% 518400) * interval '1 second' AS t) AS at"""
)

_EXPIRED_DONE_JOBS = _job_insert(
    _content_job("expired", "done", "k")
    + f"""
  FROM generate_series(0, {EXPIRED_DONE_JOBS} - 1) AS k,
       LATERAL (SELECT now() - interval '9 days' - k * interval '1 second' AS t) AS at"""
)

_DEAD_JOBS = _job_insert(
    _content_job("dead", "dead", "%(pending)s + k", "'HTTP 500 from http://big.invalid/'")
    + f"""
  FROM generate_series(0, {DEAD_JOBS} - 1) AS k,
       LATERAL (SELECT now() - interval '1 day' + k * interval '1 second' AS t) AS at"""
)

# The other source's chapter jobs and the analyze jobs, due now: behind every
# pending job of `big` in lease order.
_SMALL_SOURCE_JOBS = _job_insert(
    f"""
SELECT md5('job-small-' || k)::uuid, 'sync_chapter_content',
       jsonb_build_object('kind', 'sync_chapter_content', 'source_id', 'small',
                          'chapter_id', md5('small-chapter-' || k)::uuid::text, 'source_chapter_key', 's-' || k),
       'pending', 0, 5, 0, 0, NULL, now() - interval '1 minute', now() - interval '1 minute', now(), '',
       'sync_chapter_content:' || md5('small-chapter-' || k)::uuid::text, NULL, md5('small-chapter-' || k)::uuid, NULL,
       'small'
  FROM generate_series(0, {SMALL_SOURCE_JOBS} - 1) AS k"""
)

_ANALYZE_JOBS = _job_insert(
    f"""
SELECT md5('job-analyze-' || k)::uuid, 'analyze_page',
       jsonb_build_object('kind', 'analyze_page', 'page_id', md5('page-' || k)::uuid::text, 'force', false),
       'pending', 0, 5, 0, 0, NULL, now() - interval '30 seconds', now() - interval '30 seconds', now(), '',
       'analyze_page:' || md5('page-' || k)::uuid::text, NULL, NULL, md5('page-' || k)::uuid, ''
  FROM generate_series(0, {ANALYZE_JOBS} - 1) AS k"""
)

STEPS = (
    ("sources", _SOURCES),
    ("series", _SERIES),
    ("mangas", _MANGAS),
    ("the 2,000-chapter manga", _LONG_MANGA),
    ("manga sources", _MANGA_SOURCES),
    ("chapters", _CHAPTERS),
    ("its chapters", _LONG_CHAPTERS),
    ("pending jobs", _PENDING_JOBS),
    ("done jobs", _DONE_JOBS),
    ("expired done jobs", _EXPIRED_DONE_JOBS),
    ("dead jobs", _DEAD_JOBS),
    ("other sources' and analyze jobs", _SMALL_SOURCE_JOBS + ";\n" + _ANALYZE_JOBS),
    ("mirror sources", _COPY_SOURCES),
    ("mirror copies of the mangas", _COPY_MANGAS),
    ("mirror copies' chapters", _COPY_CHAPTERS),
)


def seed(size: Size, log: object = print) -> None:
    """Fill the migrated database Django points at, then VACUUM ANALYZE it."""
    import time

    from django.db import connection

    params = {
        "mangas": size.mangas,
        "chapters": size.chapters,
        "pending": size.pending,
        "done": size.done,
        "small": SMALL_SOURCE_MANGAS,
        "long": LONG_MANGA_CHAPTERS,
        "long_id": LONG_MANGA_ID,
        "copies": size.copies,
    }
    with connection.cursor() as cursor:
        for label, statement in STEPS:
            began = time.perf_counter()
            for part in statement.split(";\n"):
                cursor.execute(part, params)
            log(f"  {label}: {time.perf_counter() - began:.1f} s")  # type: ignore[operator]
    began = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    log(f"  VACUUM ANALYZE: {time.perf_counter() - began:.1f} s")  # type: ignore[operator]
