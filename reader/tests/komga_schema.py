"""Validate a Komga API response against the operation's response schema in Komga's own OpenAPI description."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPEC_PATH = Path(__file__).parent / "schemas" / "komga" / "openapi.json"
SPEC_URI = "urn:komga-openapi"

# Fields Mihon's Komga extension parses without a default (kotlinx.serialization refuses a response
# missing one), beyond what the published schema marks required: the Spring page wrapper's.
MIHON_PAGE_FIELDS = (
    "content",
    "empty",
    "first",
    "last",
    "number",
    "numberOfElements",
    "size",
    "totalElements",
    "totalPages",
)


@cache
def spec() -> dict[str, Any]:
    return json.loads(SPEC_PATH.read_text())


@cache
def _registry() -> Registry:
    return Registry().with_resource(SPEC_URI, Resource.from_contents(spec(), default_specification=DRAFT202012))


def response_schema(path: str, method: str, status: int = 200) -> dict[str, Any]:
    operation = spec()["paths"][path][method.lower()]
    content = operation["responses"][str(status)]["content"]
    return (content.get("application/json") or content["*/*"])["schema"]


def assert_komga_valid(path: str, method: str, body: Any, status: int = 200) -> None:
    """`body` is valid against the `path` operation's `status` response schema (refs resolved in Komga's document)."""
    schema = response_schema(path, method, status)
    if "$ref" in schema:
        schema = {"$ref": SPEC_URI + schema["$ref"]}
    elif schema.get("items", {}).get("$ref"):
        schema = {**schema, "items": {"$ref": SPEC_URI + schema["items"]["$ref"]}}
    validator = Draft202012Validator(schema, registry=_registry(), format_checker=FormatChecker())
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])
