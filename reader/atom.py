"""Atom/OPDS 1.2 documents built with ElementTree: escaping is the serializer's job, never ours.

The builders take plain values (titles, URLs, timestamps) and return bytes,
so feed shape is testable without a request. Text and attribute values pass
through `clean_text` once more: ElementTree writes a U+0001 as is, and one such
character makes the whole feed ill-formed for every client. Namespaces: Atom (default),
OPDS, Dublin Core terms, OpenSearch and the Page Streaming Extension.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from xml.etree import ElementTree as ET

from catalog.text import clean_text

ATOM = "http://www.w3.org/2005/Atom"
OPDS = "http://opds-spec.org/2010/catalog"
DC = "http://purl.org/dc/terms/"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
PSE = "http://vaemendis.net/opds-pse/ns"

NAVIGATION = "application/atom+xml;profile=opds-catalog;kind=navigation"
ACQUISITION = "application/atom+xml;profile=opds-catalog;kind=acquisition"
OPENSEARCH_TYPE = "application/opensearchdescription+xml"
CBZ_TYPE = "application/vnd.comicbook+zip"
REL_ACQUISITION = "http://opds-spec.org/acquisition"
REL_IMAGE = "http://opds-spec.org/image"
REL_THUMBNAIL = "http://opds-spec.org/image/thumbnail"
REL_PSE_STREAM = "http://vaemendis.net/opds-pse/stream"

for prefix, uri in (("", ATOM), ("opds", OPDS), ("dcterms", DC), ("opensearch", OPENSEARCH), ("pse", PSE)):
    ET.register_namespace(prefix, uri)


def _q(ns: str, name: str) -> str:
    return f"{{{ns}}}{name}"


def rfc3339(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Link:
    href: str
    rel: str | None = None
    type: str | None = None
    title: str | None = None
    extra: dict[str, str] = field(default_factory=dict)  # namespaced attributes, e.g. {"{PSE}count": "12"}


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    updated: datetime
    links: list[Link]
    content: str = ""
    summary: str = ""
    authors: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    language: str = ""
    issued: str = ""


@dataclass(frozen=True)
class Feed:
    id: str
    title: str
    updated: datetime
    links: list[Link]
    entries: list[Entry]
    author: str = "Mangalord"
    subtitle: str = ""
    icon: str = ""


def _link(parent: ET.Element, link: Link) -> None:
    attrs = {"href": link.href}
    for key, value in (("rel", link.rel), ("type", link.type), ("title", link.title)):
        if value:
            attrs[key] = value
    attrs.update(link.extra)
    ET.SubElement(parent, _q(ATOM, "link"), {k: clean_text(v) for k, v in attrs.items()})


def _text(parent: ET.Element, ns: str, name: str, value: str, **attrs: str) -> None:
    ET.SubElement(parent, _q(ns, name), {k: clean_text(v) for k, v in attrs.items()}).text = clean_text(value)


def _entry(parent: ET.Element, entry: Entry) -> None:
    node = ET.SubElement(parent, _q(ATOM, "entry"))
    _text(node, ATOM, "id", entry.id)
    _text(node, ATOM, "title", entry.title)
    _text(node, ATOM, "updated", rfc3339(entry.updated))
    for name in entry.authors:
        author = ET.SubElement(node, _q(ATOM, "author"))
        _text(author, ATOM, "name", name)
    for term in entry.categories:
        ET.SubElement(node, _q(ATOM, "category"), {"term": clean_text(term), "label": clean_text(term)})
    if entry.language:
        _text(node, DC, "language", entry.language)
    if entry.issued:
        _text(node, DC, "issued", entry.issued)
    if entry.summary:
        _text(node, ATOM, "summary", entry.summary, type="text")
    if entry.content:
        _text(node, ATOM, "content", entry.content, type="text")
    for link in entry.links:
        _link(node, link)


def render_feed(feed: Feed) -> bytes:
    root = ET.Element(_q(ATOM, "feed"))
    _text(root, ATOM, "id", feed.id)
    _text(root, ATOM, "title", feed.title)
    if feed.subtitle:
        _text(root, ATOM, "subtitle", feed.subtitle)
    _text(root, ATOM, "updated", rfc3339(feed.updated))
    author = ET.SubElement(root, _q(ATOM, "author"))
    _text(author, ATOM, "name", feed.author)
    if feed.icon:
        _text(root, ATOM, "icon", feed.icon)
    for link in feed.links:
        _link(root, link)
    for entry in feed.entries:
        _entry(root, entry)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def render_opensearch(*, short_name: str, description: str, template: str, feed_type: str) -> bytes:
    ns = "http://a9.com/-/spec/opensearch/1.1/"
    root = ET.Element(_q(ns, "OpenSearchDescription"))
    _text(root, ns, "ShortName", short_name)
    _text(root, ns, "Description", description)
    _text(root, ns, "InputEncoding", "UTF-8")
    _text(root, ns, "OutputEncoding", "UTF-8")
    ET.SubElement(root, _q(ns, "Url"), {"type": feed_type, "template": template})
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def pse_attributes(count: int, last_read: int = 0, last_read_at: datetime | None = None) -> dict[str, str]:
    attrs = {_q(PSE, "count"): str(count)}
    if last_read:
        attrs[_q(PSE, "lastRead")] = str(last_read)
        if last_read_at is not None:
            attrs[_q(PSE, "lastReadDate")] = rfc3339(last_read_at)
    return attrs


def newest(moments: Iterable[datetime | None], fallback: datetime) -> datetime:
    present = [m for m in moments if m is not None]
    return max(present) if present else fallback
