"""Which stored files the library still names: a page's image, a manga's cover, or a scaled copy of either.

The files the library writes live under four prefixes, each two folders
deep, so the orphan walk (`upkeep.verify.listing`) lists them all alike:

    pages/<chapter id>/<hex>.<ext>                 named by Page.image
    covers/<manga id>/<hex>.<ext>                  named by Manga.cover
    scaled/pages/<chapter id>/<hex>-<key>-w<width>.<ext>    a copy of a page (catalog.copies.copy_name)
    scaled/covers/<manga id>/<hex>-<key>-w<width>.<ext>     a copy of a cover

A copy is named when its original is: it lives while the page or cover it
was made from does. Originals and copies alike are looked up by the chapter
or manga whose id is their folder (an indexed read of that owner's rows),
not by a scan of every row for their names; only a file its folder's owner
does not name is then asked for by name, in case a row elsewhere names it. A key of a shape this
module does not know is counted as named: the walk never calls a file it
cannot read the owner of an orphan.

The pass (`upkeep.verify.run`) and the orphan repair (`upkeep.verify.repairs`,
just before it deletes) ask the same `named`, so what is reported and what
is deleted follow one rule.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from catalog.copies import ROOT as COPIES_ROOT
from catalog.models import Manga, Page

PAGES = "pages"
COVERS = "covers"
# In key order, which is the order the walk goes through them (its cursor is the last key listed).
PREFIXES = (COVERS, PAGES, f"{COPIES_ROOT}/{COVERS}", f"{COPIES_ROOT}/{PAGES}")


def prefixes_from(cursor: str) -> list[str]:
    """The prefixes with keys after `cursor`: the one it is in and those after it (all of them for "")."""
    return [prefix for prefix in PREFIXES if cursor < prefix + "/" or cursor.startswith(prefix + "/")]


def copy_original(key: str) -> str | None:
    """The stem (name without extension) of the original a copy's key was made from, or None if not a copy.

    `scaled/pages/<c>/<hex>-page-w800.webp` -> `pages/<c>/<hex>`, the inverse of `catalog.copies.copy_name`.
    """
    if not key.startswith(COPIES_ROOT + "/"):
        return None
    directory, _, file = key[len(COPIES_ROOT) + 1 :].rpartition("/")
    parts = file.rsplit(".", 1)[0].rsplit("-", 2)
    if not directory or len(parts) != 3 or not parts[0] or not parts[2].startswith("w") or not parts[2][1:].isdigit():
        return None
    return f"{directory}/{parts[0]}"


def owner(key: str) -> tuple[str, uuid.UUID] | None:
    """(PAGES, chapter id) or (COVERS, manga id) whose folder holds `key` (or holds a copy's original)."""
    name = copy_original(key) or key
    parts = name.split("/")
    if len(parts) != 3 or parts[0] not in (PAGES, COVERS):
        return None
    try:
        return parts[0], uuid.UUID(parts[1])
    except ValueError:
        return None


def finding_fields(key: str) -> dict[str, Any]:
    """The chapter or manga a finding about `key` is filed under, for the report."""
    found = owner(key)
    if found is None:
        return {}
    return {"chapter_id": found[1]} if found[0] == PAGES else {"manga_id": found[1]}


def named(keys: Sequence[str]) -> set[str]:
    """The keys of `keys` that a page row or a manga names, directly or as a copy of what they name."""
    originals = [key for key in keys if key.startswith((PAGES + "/", COVERS + "/"))]
    owned = _owned_names(originals)
    found = {key for key in originals if key in owned}
    if unmatched := [key for key in originals if key not in found]:
        # A file its folder's owner does not name: an orphan, unless a row elsewhere names it. Asked by name,
        # an unindexed read, only for these few: a library that is whole never asks it.
        found.update(Page.objects.filter(image__in=unmatched).values_list("image", flat=True))
        found.update(Manga.objects.filter(cover__in=unmatched).values_list("cover", flat=True))
    copies = {key: copy_original(key) for key in keys if key.startswith(COPIES_ROOT + "/")}
    found.update(key for key, original in copies.items() if original is None or owner(key) is None)
    live = _live_stems([key for key, original in copies.items() if original is not None and owner(key) is not None])
    found.update(key for key, original in copies.items() if original in live)
    known = (PAGES + "/", COVERS + "/", COPIES_ROOT + "/")
    found.update(key for key in keys if not key.startswith(known))
    return found


def _owned_names(keys: list[str]) -> set[str]:
    """What the chapters and mangas whose folders hold `keys` name (an indexed read of those owners' rows)."""
    return set(_names_of_owners([key for key in keys if owner(key) is not None]))


def _live_stems(copies: list[str]) -> set[str]:
    """The stems of the originals named by the chapters and mangas whose folders hold `copies`."""
    return {name.rsplit(".", 1)[0] for name in _names_of_owners(copies)}


def _names_of_owners(keys: list[str]) -> list[str]:
    """Every page image of the chapters, and every cover of the mangas, whose folders hold `keys` (each with an
    owner): two indexed reads at most."""
    chapters, mangas = set(), set()
    for key in keys:
        kind, owner_id = owner(key)  # type: ignore[misc]  # the callers keep only keys with an owner
        (chapters if kind == PAGES else mangas).add(owner_id)
    names: list[str] = []
    if chapters:
        names.extend(Page.objects.filter(chapter_id__in=chapters).values_list("image", flat=True))
    if mangas:
        names.extend(Manga.objects.filter(id__in=mangas).exclude(cover="").values_list("cover", flat=True))
    return names
