"""The recorded Suwayomi schemas, loaded once, and a check of a document against one of them.

`schema.graphql` is the newest recorded server (r2320); `schema-r1353.graphql`
the oldest the bridge is checked against (August 2023, the first schema the
WebUI generated its client from).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from graphql import GraphQLSchema, build_schema, parse, validate

NEWEST = "r2320"
OLDEST = "r1353"
SCHEMA_FILES = {NEWEST: "schema.graphql", OLDEST: "schema-r1353.graphql"}


@cache
def suwayomi_schema(version: str = NEWEST) -> GraphQLSchema:
    return build_schema(Path(__file__).with_name(SCHEMA_FILES[version]).read_text(encoding="utf-8"))


def document_errors(document: str, version: str = NEWEST) -> list[str]:
    """What is wrong with `document` against the schema of server `version` (empty when it is valid)."""
    return [error.message for error in validate(suwayomi_schema(version), parse(document))]
