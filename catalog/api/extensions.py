"""Fields that apps built on the catalog add to the library API's pages and chapters.

The catalog knows nothing of analysis, yet a chapter in the API shows each
page's analysis and a per-chapter summary. The analysis app registers those
fields here from its `AppConfig.ready()`; the serializers add them in
`get_fields()` (so the OpenAPI schema sees them) and the chapter view joins
every related row a registered page field names, keeping the query count
constant per request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the fields are built in the web process only; registering them imports no DRF
    from rest_framework import serializers

FieldFactory = Callable[[], "serializers.Field"]


@dataclass(frozen=True)
class Extension:
    name: str
    field: FieldFactory
    select_related: str | None = None  # the relation a page field reads, joined by the chapter query


_page_fields: dict[str, Extension] = {}
_chapter_fields: dict[str, Extension] = {}


def register_page_field(name: str, field: FieldFactory, *, select_related: str | None = None) -> None:
    _page_fields[name] = Extension(name, field, select_related)


def register_chapter_field(name: str, field: FieldFactory) -> None:
    _chapter_fields[name] = Extension(name, field)


def page_fields() -> dict[str, serializers.Field]:
    return {ext.name: ext.field() for ext in _page_fields.values()}


def chapter_fields() -> dict[str, serializers.Field]:
    return {ext.name: ext.field() for ext in _chapter_fields.values()}


def page_select_related() -> list[str]:
    return [ext.select_related for ext in _page_fields.values() if ext.select_related]
