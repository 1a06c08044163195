"""Scaled and converted copies of stored images: where they live, and which have lost their original.

A copy of `pages/<chapter id>/<hex>.png` lives at
`scaled/pages/<chapter id>/<hex>-<key>-w<width>.<ext>`: its original's
directory mirrored under scaled/, its name made from the original's own
(id-made) name, never from a source string. Code that deletes originals
(a chapter's re-download sweep, a replaced cover) sweeps the mirrored
directory with `remove_orphan_copies`, so no copy outlives its page.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.core.files.storage import Storage, default_storage

ROOT = "scaled"


def copy_name(original: str, key: str, width: int | None, ext: str) -> str:
    """Storage name of `original`'s copy made for `key` ("page", "thumb") at `width` (None: full width)."""
    stem = original.rsplit(".", 1)[0]
    return f"{ROOT}/{stem}-{key}-w{width or 0}.{ext}"


def orphan_copies(directory: str, files: Sequence[str], originals: Iterable[str]) -> list[str]:
    """Copies in `directory`'s mirror (file names `files`) whose original is none of `originals`."""
    kept = {name.rsplit("/", 1)[-1].rsplit(".", 1)[0] for name in originals}
    return sorted(f"{ROOT}/{directory}/{f}" for f in files if f.rsplit("-", 2)[0] not in kept)


def remove_orphan_copies(directory: str, originals: Iterable[str], *, storage: Storage | None = None) -> list[str]:
    """Delete the copies of files in `directory` that are not copies of `originals`; returns their names."""
    storage = storage or default_storage
    try:
        _, files = storage.listdir(f"{ROOT}/{directory}")
    except FileNotFoundError:
        return []
    orphans = orphan_copies(directory, files, originals)
    for name in orphans:
        storage.delete(name)
    return orphans
