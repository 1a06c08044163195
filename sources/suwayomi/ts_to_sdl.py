"""Rebuild Suwayomi's GraphQL SDL from the TypeScript its WebUI generates from the server's schema.

Suwayomi-Server builds its schema in code (graphql-kotlin) and publishes no
SDL file; Suwayomi-WebUI runs graphql-codegen's `typescript` plugin against a
running server and commits the result (`src/lib/graphql/generated/
graphql-base.types.ts`). That file carries every type, field, argument,
nullability and enum value, so the SDL is recovered mechanically:

    python -m sources.suwayomi.ts_to_sdl graphql-base.types.ts > schema.graphql

An older WebUI kept base types and its operations' types in one file
(`graphql.ts`); the operations' one-line result types are skipped.

Names come from `__typename` where the plugin kept it (it PascalCases TS
names: `AboutWebUi` is GraphQL's `AboutWebUI`); descriptions are dropped,
deprecations kept. Interfaces the plugin flattened into unions of their
implementers (`Node`) stay unions: our queries never select on them.
"""

from __future__ import annotations

import re
import sys

_FIELD = re.compile(r"^\s*(\w+)(\??): (.+);$")
_SCALAR = re.compile(r"^Scalars\['(\w+)'\]\['(input|output)'\]$")


def _unwrap(ts: str, names: dict[str, str]) -> tuple[str, str | None]:
    """A TS type expression as an SDL type (nullable unless a Maybe is absent) and its scalar side."""
    for wrapper in ("InputMaybe<", "Maybe<"):
        if ts.startswith(wrapper):
            inner, side = _unwrap(ts[len(wrapper) : -1], names)
            return inner.removesuffix("!"), side
    if ts.startswith("Array<"):
        inner, side = _unwrap(ts[len("Array<") : -1], names)
        return f"[{inner}]!", side
    scalar = _SCALAR.match(ts)
    if scalar:
        return f"{scalar[1]}!", scalar[2]
    return f"{names.get(ts, ts)}!", None


def convert(text: str) -> str:
    blocks: list[tuple[str, str, str, str]] = []
    for match in re.finditer(r"^export (type|enum) (\w+)(.*?)(?=^export |\Z)", text, re.M | re.S):
        kind, name, body = match[1], match[2], match[3]
        if name in ("Maybe", "InputMaybe", "Scalars") or body.startswith("<"):  # codegen's generic helpers
            continue
        if re.match(r"\s*=\s*(?:\{ |Exact<)", body):  # an operation's or fragment's one-line result type
            continue
        typename = re.search(r"__typename\?: '(\w+)'", body)
        blocks.append((kind, name, body, typename[1] if typename else name))
    names = {name: gql for _, name, _, gql in blocks}
    args: dict[tuple[str, str], list[str]] = {}
    out: list[str] = []
    parsed: list[tuple[str, str, str, list[tuple[str, str, str | None, str]], list[str]]] = []
    for kind, name, body, gql in blocks:
        if kind == "enum":
            values = re.findall(r"= '(\w+)',", body)
            out.append(f"enum {gql} {{\n" + "".join(f"  {v}\n" for v in values) + "}\n")
            continue
        header = body.split("{", 1)[0]
        if "{" not in body:  # a union of object types
            members = [names.get(m.strip(), m.strip()) for m in header.replace("=", "").split("|") if m.strip(" ;\n")]
            out.append(f"union {gql} = {' | '.join(m.strip(' ;') for m in members)}\n")
            continue
        interfaces = [names.get(i.strip(), i.strip()) for i in header.replace("=", "").split("&") if i.strip()]
        fields: list[tuple[str, str, str | None, str]] = []
        deprecated = ""
        for line in body.split("{", 1)[1].splitlines():
            note = re.search(r"@deprecated\s*(.*?)\s*\*/", line)
            if note:
                deprecated = note[1].lstrip(", ") or "No longer supported"
            field = _FIELD.match(line)
            if field and field[1] != "__typename":
                sdl, side = _unwrap(field[3], names)
                fields.append((field[1], sdl, side, deprecated))
                deprecated = ""
        parsed.append((name, gql, "type" if "__typename" in body else "?", fields, interfaces))
    object_names = {gql for _, gql, shape, _, _ in parsed if shape == "type"}
    for name, _gql, _shape, fields, _ in parsed:  # `QuerySourcesArgs` holds the arguments of Query.sources
        for prefix in sorted(object_names, key=len, reverse=True):
            if name.startswith(prefix) and name.endswith("Args") and len(name) > len(prefix) + 4:
                field_name = name[len(prefix) : -4]
                args[(prefix, field_name[0].lower() + field_name[1:])] = [f"{f}: {t}" for f, t, _, _ in fields]
                break
    arg_types = {f"{owner}{field[0].upper()}{field[1:]}Args" for owner, field in args}
    for name, gql, shape, fields, interfaces in parsed:
        if name in arg_types:
            continue
        if shape == "?":  # no __typename: an input type (input scalars, or named so) or a flattened interface
            sides = {side for _, _, side, _ in fields if side}
            shape = "input" if sides == {"input"} or (not sides and name.endswith("Input")) else "interface"
        lines = []
        for field, sdl, _, deprecated in fields:
            field_args = args.get((gql, field))
            signature = f"({', '.join(field_args)})" if field_args else ""
            note = f' @deprecated(reason: "{deprecated}")' if deprecated and shape != "input" else ""
            lines.append(f"  {field}{signature}: {sdl}{note}\n")
        implements = f" implements {' & '.join(interfaces)}" if interfaces and shape == "type" else ""
        out.append(f"{shape} {gql}{implements} {{\n" + "".join(lines) + "}\n")
    scalars = re.findall(r"^\s+(\w+): \{ input: ", text, re.M)
    builtin = {"ID", "String", "Boolean", "Int", "Float"}
    head = "".join(f"scalar {s}\n" for s in scalars if s not in builtin)
    return head + "\n" + "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        sys.stdout.write(convert(handle.read()))
