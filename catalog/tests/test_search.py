"""Title search: trigram, accent- and case-insensitive, ranked on PostgreSQL; a plain icontains on SQLite."""

from __future__ import annotations

import pytest
from django.db import connection

from catalog.api.views import manga_list
from testsupport import api_factories as f

on_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_trgm is a PostgreSQL extension")


def titles(q: str) -> list[str]:
    return [m.title for m in manga_list(q=q)]


@pytest.fixture
def library(db):
    f.manga("Crème Brûlée Dragon", alt_titles=["Le Dragon Sucré", "甘い竜"])
    f.manga("Dragon Quest Gaiden")
    f.manga("The Dragonfly Diaries")
    f.manga("Moon River 4242")
    f.manga("100% Orange_Juice")


@on_postgres
@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("BRÛLÉE", ["Crème Brûlée Dragon"]),  # case and accents on the query side
        ("creme brulee", ["Crème Brûlée Dragon"]),  # and on the title side
        ("sucre", ["Crème Brûlée Dragon"]),  # an alternative title
        ("甘い", ["Crème Brûlée Dragon"]),  # a substring too short for trigrams still matches
        ("river 42", ["Moon River 4242"]),
        ("% orange_", ["100% Orange_Juice"]),  # % and _ are literal characters, not wildcards
        ("zzz", []),
    ],
)
def test_postgres_search_is_case_and_accent_insensitive_on_every_title(library, q, expected):
    assert titles(q) == expected


@on_postgres
def test_postgres_search_forgives_a_typo_and_ranks_the_closest_match_first(library):
    assert titles("dragn quest") == ["Dragon Quest Gaiden"]  # word similarity when no title contains it
    # Every title containing the word, those it covers most first (two of 19 characters, then one of 21).
    found = titles("dragon")
    assert set(found[:2]) == {"Crème Brûlée Dragon", "Dragon Quest Gaiden"}
    assert found[2:] == ["The Dragonfly Diaries"]
    assert titles("dragonfly")[0] == "The Dragonfly Diaries"
    f.manga("Dragon")
    assert titles("dragon")[0] == "Dragon"  # the exact title before any longer one


@on_postgres
def test_close_matches_are_offered_only_when_no_title_contains_the_query(library):
    f.manga("Dragon Quets")  # a misspelt twin: close to "dragon quest", but no substring of it
    assert titles("dragon quest") == ["Dragon Quest Gaiden"]
    assert set(titles("dragon qest")) == {"Dragon Quest Gaiden", "Dragon Quets"}


@on_postgres
@pytest.mark.parametrize("q", ["moon 4242", "sucré"])
def test_postgres_search_is_answered_from_the_trigram_indexes(library, q):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a tiny table would otherwise be scanned
        plan = manga_list(q=q)[:50].explain()
    assert "catalog_manga_title_trgm" in plan
    assert "catalog_manga_alt_titles_trgm" in plan


@pytest.mark.sqlite_ok
def test_search_through_the_api_ranks_and_counts(alice_client, library):
    response = alice_client.get("/api/v1/mangas/", {"q": "dragon quest"})
    assert response.status_code == 200
    body = response.json()
    assert body["results"][0]["title"] == "Dragon Quest Gaiden"
    assert body["count"] == len(body["results"]) >= 1


@pytest.mark.sqlite_ok
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's portable search")
def test_sqlite_search_is_a_plain_case_insensitive_substring_of_the_title(library):
    assert titles("DRAGON Q") == ["Dragon Quest Gaiden"]
    assert titles("sucré") == []  # alternative titles and accents are PostgreSQL features
