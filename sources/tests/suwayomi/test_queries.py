"""Every document the Suwayomi adapter sends is valid against the recorded schema (pure, no server)."""

from __future__ import annotations

import pytest
from graphql import GraphQLObjectType

from sources.suwayomi import queries
from sources.suwayomi.schema import NEWEST, OLDEST, document_errors, suwayomi_schema

pytestmark = pytest.mark.sqlite_ok


NEWER_ONLY = {"About", "Login"}  # `aboutServer` and UI_LOGIN's `login` came after r1353
OLDER_ONLY = {"AboutLegacy"}  # `about`, renamed `aboutServer` since


@pytest.mark.parametrize("name", sorted(set(queries.ALL) - OLDER_ONLY))
def test_each_document_we_send_validates_against_the_newest_recorded_schema(name):
    assert document_errors(queries.ALL[name], NEWEST) == []


@pytest.mark.parametrize("name", sorted(set(queries.ALL) - NEWER_ONLY))
def test_every_crawl_document_validates_against_the_oldest_recorded_schema_too(name):  # AboutLegacy included
    assert document_errors(queries.ALL[name], OLDEST) == []


def test_what_the_oldest_server_lacks_is_what_the_bridge_falls_back_from_or_documents():
    assert document_errors(queries.ABOUT, OLDEST) == ["Cannot query field 'aboutServer' on type 'Query'."]
    assert document_errors(queries.LOGIN, OLDEST) == ["Cannot query field 'login' on type 'Mutation'."]
    assert document_errors(queries.ABOUT_LEGACY, NEWEST) == ["Cannot query field 'about' on type 'Query'."]


def test_a_document_with_a_field_the_server_lacks_is_refused():
    broken = queries.CHAPTER_PAGES.replace("{ pages }", "{ pages pageUrls }")
    assert document_errors(broken) == [
        "Cannot query field 'pageUrls' on type 'FetchChapterPagesPayload'. Did you mean 'pages'?"
    ]


def test_the_recorded_schema_carries_the_operations_the_adapter_needs():
    schema = suwayomi_schema()
    mutation = schema.mutation_type
    assert isinstance(mutation, GraphQLObjectType)
    for name in ("fetchSourceManga", "fetchManga", "fetchChapters", "fetchChapterPages", "login"):
        assert name in mutation.fields
    listing = schema.get_type("FetchSourceMangaType")
    assert sorted(listing.values) == ["LATEST", "POPULAR", "SEARCH"]  # type: ignore[union-attr]
