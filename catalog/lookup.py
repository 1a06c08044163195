"""Finding one manga from what an operator types: its id, its slug (`crimson-tide`) or its title.

Commands take whichever the operator has at hand (`export_cbz --manga`).
Exact matches win over partial ones: an id, then a title equal but for case,
then a slug, then a title containing the words. More than one match at the
winning step is an error listing the candidates with their ids.
"""

from __future__ import annotations

import uuid

from django.db.models import Q
from django.utils.text import slugify

from catalog.models import Manga

MAX_CANDIDATES = 10


class MangaNotFound(LookupError):
    """Nothing, or more than one manga, matches; the message says which and how to be precise."""


def _one(ref: str, matches: list[Manga], how: str) -> Manga | None:
    if len(matches) == 1:
        return matches[0]
    if not matches:
        return None
    listed = "; ".join(f"{m.title!r} (id {m.id})" for m in matches[:MAX_CANDIDATES])
    more = f" and {len(matches) - MAX_CANDIDATES} more" if len(matches) > MAX_CANDIDATES else ""
    raise MangaNotFound(f"{ref!r} matches {len(matches)} mangas by {how}: {listed}{more}; give the id")


def find_manga(ref: str) -> Manga:
    """The one manga `ref` names (id, slug or title); raises MangaNotFound otherwise."""
    text = ref.strip()
    try:
        manga_id = uuid.UUID(text)
    except ValueError:
        pass
    else:
        found = Manga.objects.filter(id=manga_id).first()
        if found is None:
            raise MangaNotFound(f"no manga with id {manga_id}")
        return found
    if not text:
        raise MangaNotFound("an empty manga reference: give an id, a slug or a title")
    exact = _one(text, list(Manga.objects.filter(title__iexact=text).order_by("title")), "title")
    if exact is not None:
        return exact
    # Narrow by each word in the database, then compare slugs in Python (titles keep their punctuation).
    words = [w for w in slugify(text).split("-") if w]
    containing = Q()
    for word in words:
        containing &= Q(title__icontains=word)
    candidates = list(Manga.objects.filter(containing).order_by("title")) if words else []
    by_slug = _one(text, [m for m in candidates if slugify(m.title) == slugify(text)], "slug")
    if by_slug is not None:
        return by_slug
    partial = _one(text, candidates, "partial title")
    if partial is not None:
        return partial
    raise MangaNotFound(f"no manga matches {text!r} by id, slug or title")
