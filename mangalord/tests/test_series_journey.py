"""One series across two Madara sites, crawled by the real commands: matching on arrival and by group_series,
suggestions for the weak cases and none for a title collision, each chapter key downloaded once, the library API's
one entry per series, and one progress across the sources' copies read through the Komga API.

The two sites are the Madara fixture site (testsupport.theme_sites.madara) with the overlapping catalogs of
docs/series.md: the same series under the same title with the author's name written in the other order, under a
translated title the other site lists as an alternative, two different series sharing a title, one cover under
two titles, and a per-volume series ("Vol.2 Ch.1") whose chapters restart each volume.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import dataclass
from functools import cached_property

import pytest
from django.test import Client

from catalog.chapter_keys import chapter_key
from catalog.models import Chapter, Manga, MangaSource, Series, SeriesSuggestion
from conftest import REPO_ROOT
from demo.site.images import render_cover
from mangalord.tests.series_failover import a_refused_chapter_fails_over_to_the_next_source
from mangalord.tests.series_reads.komga import check_komga
from mangalord.tests.series_reads.opds import check_opds_and_export
from mangalord.tests.series_reads.web import check_web
from reader.tests.conftest import basic
from reader.tests.komga_schema import assert_komga_valid
from testsupport.theme_sites.catalog import FixtureChapter, FixtureManga
from testsupport.theme_sites.madara import MadaraSite

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]
PASSWORD = "reader-password"
LOCAL_PACE = ("--set", "rate_limit=500", "--set", "burst=100", "--set", "max_concurrency=8")
ENV = {"ANALYSIS_ENABLED": "false", "JOBS_POLL_SECS": "0.2", "JOBS_WORKERS": "2"}


@dataclass(frozen=True)
class SharedCover(FixtureManga):
    """A manga whose site shows another title's cover (one picture under two titles)."""

    cover_of: str = ""

    @cached_property
    def cover(self) -> bytes:
        return render_cover(self.cover_of or self.title, "png")


def _manga(post_id, slug, title, author, labels, alt=(), cover_of=""):
    chapters = tuple(
        FixtureChapter(slug, title, n, dt.datetime(2026, 11, n, tzinfo=dt.UTC), None, label=label, page_kinds=("png",))
        for n, label in enumerate(labels, start=1)
    )
    return SharedCover(post_id, slug, title, tuple(alt), author, "OnGoing", "ongoing", ("Drama",), chapters, cover_of)


ALPHA = [
    _manga(400, "tide", "The Tide", "Mori Kei", ["Chapter 1", "Chapter 2", "Chapter 3"]),
    _manga(401, "frieren", "Sōsō no Frieren", "Yamada Kanehito", ["Chapter 1", "Chapter 2"]),
    _manga(402, "revenge", "Revenge", "Aoi Sora", ["Chapter 1"]),
    _manga(403, "hikari", "Hikari no Ou", "", ["Chapter 1"], cover_of="Hikari no Ou"),
    _manga(404, "restart", "Restart", "Ito Jun", ["Vol.1 Ch.1", "Vol.1 Ch.2", "Vol.2 Ch.1"]),
]
BETA = [
    _manga(500, "the-tide", "The Tide", "Kei Mori", ["Chapter 2", "Chapter 3", "Chapter 4"]),
    _manga(
        501, "frieren-beyond", "Frieren: Beyond Journey's End", "Kanehito Yamada", ["Chapter 1", "Chapter 2"],
        alt=("Soso no Frieren",),
    ),
    _manga(502, "revenge-2", "Revenge", "Park Min", ["Chapter 1"], cover_of="Revenge by Park Min"),
    _manga(503, "king", "King of Light", "", ["Chapter 1"], cover_of="Hikari no Ou"),
    _manga(504, "restart-2", "Restart", "Jun Ito", ["Vol.1 Ch.1", "Vol.1 Ch.2", "Vol.2 Ch.1", "Vol.2 Ch.2"]),
]  # fmt: skip
# (alpha title, beta title) -> what must come of them
EXPECTED = {
    ("The Tide", "The Tide"): "merge",
    ("Sōsō no Frieren", "Frieren: Beyond Journey's End"): "merge",
    ("Revenge", "Revenge"): "none",
    ("Hikari no Ou", "King of Light"): "suggest",
    ("Restart", "Restart"): "merge",
}


def manage(manage_cmd, env, *args):
    done = subprocess.run([*manage_cmd, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{args[0]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _copy(source, title):
    return MangaSource.objects.select_related("manga").get(source_id=source, manga__title=title).manga


def _outcome(first: Manga, second: Manga) -> str:
    if first.series_id == second.series_id:
        return "merge"
    pair = {first.series_id, second.series_id}
    return "suggest" if SeriesSuggestion.objects.filter(first__in=pair, second__in=pair).exists() else "none"


def test_two_sites_make_one_series_per_real_series_downloaded_once_and_read_once(
    child_env, manage_cmd, django_user_model
):
    alpha, beta = MadaraSite(catalog=ALPHA), MadaraSite(catalog=BETA)
    env = {**child_env, **ENV}
    try:
        manage(manage_cmd, env, "add_source", alpha.base_url + "/", "--id", "alpha", *LOCAL_PACE)
        manage(manage_cmd, env, "add_source", beta.base_url + "/", "--id", "beta", *LOCAL_PACE)
        manage(manage_cmd, env, "metadata_pass")
        printed = manage(manage_cmd, env, "group_series", "--dry-run")
        assert "Revenge" not in printed, "a title collision is neither merged nor suggested"
        manage(manage_cmd, env, "group_series")
        manage(manage_cmd, env, "crawl_worker", "--drain", "--no-schedule")

        table = {(a, b): _outcome(_copy("alpha", a), _copy("beta", b)) for a, b in EXPECTED}
        assert table == EXPECTED

        # Each chapter key of a merged series downloaded once, from alpha where it has it.
        for a, _ in [pair for pair, outcome in EXPECTED.items() if outcome == "merge"]:
            series = _copy("alpha", a).series_id
            done = Chapter.objects.filter(manga__series_id=series, sync_state=Chapter.SyncState.DONE)
            keys = [chapter_key(c.kind, c.volume, c.number, c.title) for c in done]
            assert len(keys) == len(set(keys)), (a, sorted(k.label() for k in keys))
        restart = _copy("alpha", "Restart").series_id
        done = Chapter.objects.filter(manga__series_id=restart, sync_state="done").order_by("volume", "number")
        assert [(c.source_id, chapter_key(c.kind, c.volume, c.number, c.title).label()) for c in done] == [
            ("alpha", "v1 c1"),
            ("alpha", "v1 c2"),
            ("alpha", "v2 c1"),
            ("beta", "v2 c2"),
        ]

        reader = django_user_model.objects.create_user("reader", "reader@example.com", PASSWORD)
        api = Client()
        api.force_login(reader)
        listed = api.get("/api/v1/library/series/", {"page_size": 100}).json()["results"]
        assert sorted(s["title"] for s in listed) == sorted(
            ["The Tide", "Sōsō no Frieren", "Revenge", "Revenge", "Hikari no Ou", "King of Light", "Restart"]
        )
        assert Series.objects.filter(merged_into=None).count() == 7
        check_opds_and_export("reader", PASSWORD)

        # Chapter 2 of The Tide read from alpha is read in beta's copy too, as Komga shows it.
        tide_alpha, tide_beta = _copy("alpha", "The Tide"), _copy("beta", "The Tide")
        ch2 = Chapter.objects.get(manga=tide_alpha, number=2)
        twin = Chapter.objects.get(manga=tide_beta, number=2)
        assert api.put(f"/api/v1/progress/{ch2.id}/", {"last_page": 1}, content_type="application/json").json()[
            "completed"
        ]
        book = Client().get(f"/api/v1/books/{twin.id}", **basic("reader", PASSWORD))
        assert_komga_valid("/api/v1/books/{bookId}", "get", book.json())
        assert book.json()["readProgress"]["completed"] is True
        check_komga("reader", PASSWORD)
        check_web(api)
        a_refused_chapter_fails_over_to_the_next_source(
            alpha, lambda: manage(manage_cmd, env, "crawl_worker", "--drain", "--no-schedule")
        )
    finally:
        alpha.stop()
        beta.stop()
