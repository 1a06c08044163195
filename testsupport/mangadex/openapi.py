"""Every exchange with the MangaDex stand-in checked against MangaDex's OpenAPI description (5.10.0).

Requests: the path must be an operation of the description, every query
parameter one it declares, each value valid against its schema (`name[]`
parameters as arrays, `order[field]` gathered into the deepObject `order`).
Responses: the JSON body valid against the operation's schema for its
status. Schemas are checked with openapi-schema-validator's OAS 3.0 dialect
(`nullable`, formats), `$ref`s resolved in the description itself.

Known quirks of the description, handled here and nowhere else:
- `LocalizedString` puts its `pattern` on the values (`^[a-z]{2,8}$`), which
  every real title breaks; the pattern is meant for the language keys, so
  it is checked on the keys instead.
- `isUnavailable` on chapters is newer than 5.10.0; the description allows
  extra properties, so it validates as written.
- The 429 answer of the rate limit and the at-home report
  (`POST https://api.mangadex.network/report`) are described only in the
  docs site's prose: the 429 body is checked against `ErrorResponse`, the
  report against `REPORT_SCHEMA`, written from that prose.
"""

from __future__ import annotations

import copy
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import FormatChecker
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from testsupport.mangadex.server import Exchange

SPEC_PATH = Path(__file__).parent / "openapi.yaml"
SPEC_URI = "urn:mangadex-openapi"
VERSION = "5.10.0"
REPORT_SCHEMA = {
    "type": "object",
    "required": ["url", "success", "cached", "bytes", "duration"],
    "additionalProperties": False,
    "properties": {
        "url": {"type": "string", "pattern": "^https?://"},
        "success": {"type": "boolean"},
        "cached": {"type": "boolean"},
        "bytes": {"type": "integer", "minimum": 0},
        "duration": {"type": "integer", "minimum": 0},
    },
}
_DEEP = re.compile(r"^(\w+)\[(\w+)\]$")


@cache
def spec() -> dict[str, Any]:
    document = yaml.safe_load(SPEC_PATH.read_text())
    assert document["info"]["version"] == VERSION
    patched = copy.deepcopy(document)
    localized = patched["components"]["schemas"]["LocalizedString"]
    localized["additionalProperties"] = {"type": "string"}
    localized["propertyNames"] = {"pattern": "^[a-z]{2,8}(-[a-z]{2})?$"}
    return patched


@cache
def _registry() -> Registry:
    return Registry().with_resource(SPEC_URI, Resource.from_contents(spec(), default_specification=DRAFT4))


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    return {"$ref": SPEC_URI + schema["$ref"]} if "$ref" in schema else schema


def schema_errors(schema: dict[str, Any], value: Any) -> list[str]:
    validator = OAS30Validator(_resolved(schema), registry=_registry(), format_checker=FormatChecker())
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)]


def operation(path: str, method: str) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """The description's template for `path`, its operation, and its parameters (path-level ones too)."""
    candidates = []
    for template, item in spec()["paths"].items():
        pattern = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, path) and method.lower() in item:
            candidates.append((template.count("{"), template, item))
    assert candidates, f"{method} {path} is no operation of the MangaDex description"
    _, template, item = min(candidates)  # a literal path beats a template (/manga/random before /manga/{id})
    op = item[method.lower()]
    return template, op, [*item.get("parameters", []), *op.get("parameters", [])]


def _typed(schema: dict[str, Any], raw: str) -> Any:
    if "$ref" in schema:
        return raw
    kind = schema.get("type")
    if kind == "integer":
        return int(raw) if re.fullmatch(r"-?\d+", raw) else raw
    if kind == "boolean":
        return {"true": True, "false": False}.get(raw, raw)
    return raw


def path_values(template: str, path: str) -> dict[str, str]:
    """The path parameters of `path` by their names in `template` (`/manga/{id}/feed` -> {"id": ...})."""
    names = re.findall(r"\{([^/]+?)\}", template)
    pattern = "^" + re.sub(r"\\\{[^/]+?\\\}", "([^/]+)", re.escape(template)) + "$"
    match = re.match(pattern, path)
    return dict(zip(names, match.groups(), strict=True)) if match else {}


def request_errors(exchange: Exchange) -> list[str]:
    template, _, parameters = operation(exchange.path, exchange.method)
    declared = {p["name"]: p for p in parameters if p["in"] == "query"}
    errors = []
    in_path = {p["name"]: p for p in parameters if p["in"] == "path"}
    for name, value in path_values(template, exchange.path).items():
        errors += [f"{template} {name}: {e}" for e in schema_errors(in_path[name]["schema"], value)]
    deep: dict[str, dict[str, str]] = {}
    for name, values in exchange.query.items():
        match = _DEEP.match(name)
        if match and match.group(1) in declared and declared[match.group(1)].get("style") == "deepObject":
            deep.setdefault(match.group(1), {})[match.group(2)] = values[-1]
            continue
        if name not in declared:
            errors.append(f"{template}: query parameter {name!r} is not declared")
            continue
        schema = declared[name]["schema"]
        if name.endswith("[]"):
            value: Any = values
        else:
            value = _typed(schema, values[-1])
        errors += [f"{template} {name}: {e}" for e in schema_errors(schema, value)]
    for name, value in deep.items():
        errors += [f"{template} {name}: {e}" for e in schema_errors(declared[name]["schema"], value)]
    return errors


def response_errors(exchange: Exchange) -> list[str]:
    template, op, _ = operation(exchange.path, exchange.method)
    body = exchange.json()
    if exchange.status == 429:
        return schema_errors({"$ref": "#/components/schemas/ErrorResponse"}, body)
    answer = op["responses"].get(str(exchange.status))
    if answer is None:
        return [f"{template}: status {exchange.status} is not described"]
    return [
        f"{template} {exchange.status}: {e}"
        for e in schema_errors(answer["content"]["application/json"]["schema"], body)
    ]


def exchange_errors(exchange: Exchange) -> list[str]:
    """What is wrong with one exchange of the stand-in, by the description (or the docs' prose)."""
    if exchange.server == "api":
        return request_errors(exchange) + response_errors(exchange)
    if exchange.server == "report":
        import json

        return schema_errors(REPORT_SCHEMA, json.loads(exchange.body))
    return []


def assert_exchanges_valid(exchanges: list[Exchange]) -> None:
    problems = [f"{e.method} {e.path}: {p}" for e in exchanges for p in exchange_errors(e)]
    assert not problems, "\n".join(problems[:20])
