"""The web reader and OPDS find what the API's title search finds: any title, accents and case ignored, typos close."""

from __future__ import annotations

import pytest
from django.db import connection
from lxml import etree

from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, assert_valid_opds, basic

NS = {"a": "http://www.w3.org/2005/Atom"}
on_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_trgm is a PostgreSQL extension")
pytestmark = on_postgres

QUERIES = [
    ("creme brulee", {"Crème Brûlée Dragon"}),  # accents on the title side
    ("SUCRÉ", {"Crème Brûlée Dragon"}),  # an alternative title, in capitals, accented
    ("dragon qest", {"Dragon Quest Gaiden"}),  # no title contains it: a close match
]


@pytest.fixture
def library(db):
    f.manga("Crème Brûlée Dragon", alt_titles=["Le Dragon Sucré"])
    f.manga("Dragon Quest Gaiden")
    f.manga("Moon River")


def _api(client, q: str) -> set[str]:
    return {m["title"] for m in client.get("/api/v1/mangas/", {"q": q}).json()["results"]}


@pytest.mark.parametrize(("q", "expected"), QUERIES)
def test_opds_search_finds_what_the_api_finds(client, alice, library, opds_schema, q, expected):
    response = client.get("/opds/search/", {"q": q}, **basic("alice", PASSWORD))
    assert response.status_code == 200
    assert_valid_opds(opds_schema, response.content)
    found = set(etree.fromstring(response.content).xpath("a:entry/a:title/text()", namespaces=NS))
    client.force_login(alice)
    assert found == expected == _api(client, q)


@pytest.mark.parametrize(("q", "expected"), QUERIES)
def test_the_web_library_finds_what_the_api_finds(client, alice, library, q, expected):
    client.force_login(alice)
    page = client.get("/", {"q": q}).content.decode()
    assert {
        title for title in ("Crème Brûlée Dragon", "Dragon Quest Gaiden", "Moon River") if title in page
    } == expected


def test_opds_search_pages_a_common_word_by_title_through_every_match(client, alice, db):
    for n in range(60):
        f.manga(f"Rivière {n:02d}")
    f.manga("Unrelated")
    titles, href = [], "/opds/search/?q=riviere"
    while href:
        doc = etree.fromstring(client.get(href, **basic("alice", PASSWORD)).content)
        titles += doc.xpath("a:entry/a:title/text()", namespaces=NS)
        following = doc.xpath("a:link[@rel='next']/@href", namespaces=NS)
        href = following[0].removeprefix("http://testserver") if following else ""
    assert titles == [f"Rivière {n:02d}" for n in range(60)]
