"""Series matching: the decision table (pure), then the fixture sites' copies grouped by `group_series` on real rows.

The fixtures (testsupport.series_fixtures) are the cases of docs/series.md: same titles, an alternative-title-only
match, a title collision that is another series, one cover under two titles, a per-volume series.
"""

from __future__ import annotations

import io

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command

from catalog.cover_hash import stored_cover_hash
from catalog.models import Manga, MangaSource, Series, SeriesChange, SeriesSuggestion, Source
from catalog.series_grouping import MangaFacts, plan_grouping
from catalog.series_matching import Candidate, Decision, cover_bands, decide, match_keys, normalise_title
from testsupport.series_fixtures import CASES, cover_bytes

H1, H1_NEAR, H2 = "8b293cc3b45f36c2", "8b293cc3b45f36c1", "b16e501b3fe1c18e"


def cand(title, alts=(), authors=(), cover=""):
    return Candidate.of(title, alts, authors, cover)


DECISIONS = {
    "same title, same author": (
        cand("The Tide", authors=["Mori Kei"]),
        cand("the tide", authors=["Kei Mori"]),
        "merge",
    ),
    "alt title, same author": (
        cand("Frieren", ["Sōsō no Frieren"], ["A"]),
        cand("Soso no Frieren", (), ["A"]),
        "merge",
    ),
    "same title, close covers": (cand("Night", cover=H1), cand("NIGHT!", cover=H1_NEAR), "merge"),
    "same title, nothing else": (cand("Lonely Star"), cand("Lonely Star"), "suggest"),
    "same title, different authors": (cand("Revenge", authors=["A"]), cand("Revenge", authors=["B"]), "none"),
    "collision with different covers": (
        cand("Revenge", authors=["A"], cover=H1),
        cand("Revenge", authors=["B"], cover=H2),
        "none",
    ),
    "same title and cover, different authors": (
        cand("Revenge", authors=["A"], cover=H1),
        cand("Revenge", authors=["B"], cover=H1),
        "suggest",
    ),
    "one cover, two titles": (cand("Hikari no Ou", cover=H1), cand("King of Light", cover=H1), "suggest"),
    "one cover, two titles, two authors (a placeholder)": (
        cand("X Alpha", authors=["A"], cover=H1),
        cand("Y Beta", authors=["B"], cover=H1),
        "none",
    ),
    "nothing in common": (cand("Alpha"), cand("Beta"), "none"),
    "same author only": (cand("Alpha", authors=["A"]), cand("Beta", authors=["A"]), "none"),
}


@pytest.mark.sqlite_ok
@pytest.mark.parametrize("first, second, expected", DECISIONS.values(), ids=DECISIONS.keys())
def test_decision_table(first, second, expected):
    assert decide(first, second).decision.value == expected
    assert decide(second, first).decision.value == expected, "the decision does not depend on the order"


@pytest.mark.sqlite_ok
def test_titles_normalise_accents_case_punctuation_and_keep_other_scripts():
    assert normalise_title("Sōsō no Frieren!") == normalise_title("SOSO-NO  frieren") == "soso no frieren"
    assert normalise_title("葬送のフリーレン") == "葬送のフリーレン"
    assert normalise_title("Ｆｕｌｌ Ｗｉｄｔｈ") == "full width"


@pytest.mark.sqlite_ok
def test_close_covers_always_share_a_band_key():
    keys_a, keys_b = set(cover_bands(H1)), set(cover_bands("8b293cc3b45f36c2"[:15] + "d"))
    assert keys_a & keys_b
    assert match_keys("The Tide", ["Shio"], H1) == {"t:the tide", "t:shio", *cover_bands(H1)}
    assert match_keys("X", [], "") == frozenset(), "a title too short to tell series apart is no key"


def _facts(i, series, title, authors=(), cover="", source=None):
    import datetime as dt
    import uuid

    return MangaFacts(
        id=uuid.UUID(int=i),
        series_id=uuid.UUID(int=1000 + series),
        series_created=dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(days=series),
        title=title,
        source_id=source or f"s{i}",  # each manga from its own source unless told
        candidate=cand(title, authors=authors, cover=cover),
    )


@pytest.mark.sqlite_ok
def test_a_merge_through_a_third_manga_never_joins_a_collision():
    # A and C are the same title by different authors; B has A's author and no cover... and C's cover.
    a = _facts(1, 1, "Revenge", ["Aoi"])
    b = _facts(2, 2, "Revenge", ["Aoi"], cover=H1)
    c = _facts(3, 3, "Revenge", ["Park"], cover=H1)
    plan = plan_grouping([("t:revenge", [a, b, c])])
    assert [(m.target, m.others) for m in plan.merges] == [(a.series_id, (b.series_id,))]
    assert [(s.first, s.second) for s in plan.suggestions] == [(a.series_id, c.series_id)]


@pytest.mark.sqlite_ok
def test_two_mangas_of_one_source_are_never_merged_nor_joined_through_a_third():
    """A site lists a series once: two of its mangas with one title and author are a title collision."""
    a = _facts(1, 1, "Revenge", ["Aoi"], cover=H1, source="madara")
    b = _facts(2, 2, "Revenge", ["Aoi"], cover=H1, source="madara")
    alone = plan_grouping([("t:revenge", [a, b])])
    assert (alone.merges, alone.suggestions) == ([], [])
    c = _facts(3, 3, "Revenge", ["Aoi"], cover=H1, source="other")
    plan = plan_grouping([("t:revenge", [a, b, c])])
    assert plan.merges and all({a.series_id, b.series_id} - {m.target, *m.others} for m in plan.merges)


@pytest.mark.sqlite_ok
def test_a_rejected_pair_is_neither_merged_nor_suggested():
    a, b = _facts(1, 1, "Lonely Star"), _facts(2, 2, "Lonely Star")
    assert plan_grouping([("t:lonely star", [a, b])], {(a.series_id, b.series_id)}).suggestions == []


@pytest.mark.sqlite_ok
def test_a_key_shared_by_too_many_mangas_is_skipped_and_reported():
    members = [_facts(i, i, f"Title {i}", cover=H1) for i in range(1, 53)]
    plan = plan_grouping([("c0:8b29", members)])
    assert (plan.merges, plan.suggestions, plan.skipped_blocks) == ([], [], [("c0:8b29", 52)])


# --- the fixture sites' copies, grouped on real rows -----------------------------------------------------------


@pytest.fixture
def fixture_library(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    sources = {s: Source.objects.create(id=s, name=s.title(), base_url=f"https://{s}.test") for s in ("alpha", "beta")}
    rows = {}
    for n, case in enumerate(CASES):
        for copy in case.copies:
            manga = Manga(title=copy.title, alt_titles=list(copy.alt_titles), authors=list(copy.authors))
            if copy.cover_seed is not None:
                manga.cover.save(
                    f"{n}-{copy.source}.img",
                    ContentFile(cover_bytes(copy.cover_seed, copy=copy.cover_copy)),
                    save=False,
                )
                manga.cover_state = Manga.CoverState.STORED
            manga.save()
            MangaSource.objects.create(manga=manga, source=sources[copy.source], source_manga_key=f"m{n}")
            rows[(case.name, copy.source)] = manga
    return rows


def _run(*args):
    out = io.StringIO()
    call_command("group_series", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_the_dry_run_prints_the_merges_and_suggestions_and_changes_no_series(fixture_library):
    printed = _run("--dry-run")
    assert Series.objects.filter(merged_into=None).count() == 2 * len(CASES)
    assert not SeriesChange.objects.exists() and not SeriesSuggestion.objects.exists()
    assert "dry run: 4 merge(s) and 2 suggestion(s) not made" in printed
    assert "alpha: The Tide | beta: The Tide" in printed
    assert "alpha: Hikari no Ou | beta: King of Light" in printed
    assert "Revenge" not in printed, "a title collision is neither merged nor suggested"


@pytest.mark.django_db
def test_group_series_makes_one_series_per_real_series_and_suggests_the_weak_cases(fixture_library):
    _run()
    table = {}
    for case in CASES:
        first, second = (fixture_library[(case.name, c.source)] for c in case.copies)
        first.refresh_from_db()
        second.refresh_from_db()
        pair = {first.series_id, second.series_id}
        suggested = SeriesSuggestion.objects.filter(first__in=pair, second__in=pair).exists()
        table[case.name] = "merge" if first.series_id == second.series_id else "suggest" if suggested else "none"
    assert table == {case.name: case.expected for case in CASES}
    # Merged series keep their oldest id; the emptied ones point at it and are hidden from readers.
    assert Series.objects.filter(merged_into=None).count() == 2 * len(CASES) - 4
    assert SeriesChange.objects.filter(via="group_series").count() == 4
    # A second run finds nothing new to do.
    assert "merged 0 group(s); 0 new suggestion(s)" in _run()


@pytest.mark.django_db
def test_covers_are_hashed_from_storage(fixture_library):
    tide = fixture_library[("same title, author written in another order", "alpha")]
    assert stored_cover_hash(tide.cover.name) == stored_cover_hash(tide.cover.name) != ""
    assert stored_cover_hash("covers/missing.png") == ""


def test_decision_values_are_the_suggestion_states_vocabulary():
    assert {d.value for d in Decision} == {"merge", "suggest", "none"}
