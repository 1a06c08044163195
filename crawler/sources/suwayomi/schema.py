"""The recorded Suwayomi schema (`schema.graphql`), loaded once, and a check of a document against it."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from graphql import GraphQLSchema, build_schema, parse, validate

SCHEMA_PATH = Path(__file__).with_name("schema.graphql")


@cache
def suwayomi_schema() -> GraphQLSchema:
    return build_schema(SCHEMA_PATH.read_text(encoding="utf-8"))


def document_errors(document: str) -> list[str]:
    """What is wrong with `document` against the recorded schema (empty when it is valid)."""
    return [error.message for error in validate(suwayomi_schema(), parse(document))]
