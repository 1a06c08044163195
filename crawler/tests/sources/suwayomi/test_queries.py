"""Every document the Suwayomi adapter sends is valid against the recorded schema (pure, no server)."""

from __future__ import annotations

import pytest
from graphql import GraphQLObjectType

from crawler.sources.suwayomi import queries
from crawler.sources.suwayomi.schema import document_errors, suwayomi_schema

pytestmark = pytest.mark.sqlite_ok


@pytest.mark.parametrize("name", sorted(queries.ALL))
def test_each_document_we_send_validates_against_the_recorded_schema(name):
    assert document_errors(queries.ALL[name]) == []


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
