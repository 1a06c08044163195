"""Page images at a requested width and type: scaled once with bounded memory, then kept in storage.

The original stays in storage untouched. A smaller (or converted) copy is
made the first time a width is asked for and saved under `scaled/`, so later
views stream it like any stored file. Making one stays within bounds: libvips
(catalog/imaging.py) decodes JPEG and PNG in strips and shrinks JPEG and WebP
while decoding, so a 50-megapixel page is never held at full size, and a copy
is never wider than its decoder can produce within IMAGE_DECODE_BUDGET_MB
(a WebP converted for a PSE client that gave no width is one).

A copy is made only at one of COPY_WIDTHS: an asked width is rounded down to
the widest step at most that wide (the smallest step below it), and a page no
wider than that step is served as stored. Rounded to a multiple of 10 as it
was, a client walking `?w=` from 16 to 4096 left one 600 px page with 114
stored copies; now a page has at most one copy per step (and one full-width
conversion) for each type it is served as. The web reader asks for the steps
themselves, PSE clients for their screen's width.

OPDS-PSE 1.2 allows only JPEG, GIF and PNG: a PSE stream declares JPEG or PNG
per chapter (`pse_type`) and pages stored in another type are served
converted to it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage

from catalog import imaging
from catalog.copies import copy_name
from catalog.inputs import BadInteger, parse_bounded_int
from catalog.storage import local_copy

MIN_WIDTH = 16
MAX_WIDTH = 4096
# Phones and e-readers (540-1440 device pixels wide), tablets and desktops, and thumbnails (200, 300);
# above the thumbnails, each step at least three quarters of the next, so a copy is never much narrower than asked.
COPY_WIDTHS = (100, 200, 300, 400, 540, 720, 900, 1080, 1280, 1440, 1600, 2000, 2400, 3000, 4000)
# What a scaled copy of each stored type is encoded as (GIF and AVIF: no animation or AVIF encoder needed).
_SCALED_TYPES = {
    "image/jpeg": "image/jpeg",
    "image/png": "image/png",
    "image/webp": "image/webp",
    "image/gif": "image/png",
    "image/avif": "image/jpeg",
}
_EXTENSIONS = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp"}
# Pages stored as these stream as PNG in PSE: lossless, and a scaled copy needs no GIF encoder.
_PNG_STREAMS = frozenset({"image/png", "image/gif"})


def parse_width(raw: str | None) -> int | None:
    """A requested width in MIN_WIDTH..MAX_WIDTH, None when absent; ValueError naming the rule otherwise."""
    if raw is None or raw == "":
        return None
    try:
        return parse_bounded_int(raw, low=MIN_WIDTH, high=MAX_WIDTH)
    except BadInteger as exc:
        raise ValueError(f"width must be an integer from {MIN_WIDTH} to {MAX_WIDTH}") from exc


def needs_downscale(stored_width: int, max_width: int | None) -> bool:
    return max_width is not None and stored_width > max_width


def cache_width(width: int) -> int:
    """The width a copy is made at: the widest of COPY_WIDTHS that is at most `width`, else the narrowest."""
    return max((step for step in COPY_WIDTHS if step <= width), default=COPY_WIDTHS[0])


def scaled_type(content_type: str) -> str:
    return _SCALED_TYPES.get(content_type, "image/jpeg")


def pse_type(stored_types: Iterable[str]) -> str:
    """The one type a chapter's PSE stream declares: PNG when every page is PNG or GIF, else JPEG."""
    kinds = set(stored_types)
    return "image/png" if kinds and kinds <= _PNG_STREAMS else "image/jpeg"


def render(path: str, width: int | None, content_type: str, out_path: str) -> None:
    """The image at `path`, at most `width` wide (None: as wide as it is), encoded as `content_type` into `out_path`.

    The width is lowered further when the decoder would need more than the
    decode budget for it (WebP holds the frame it decodes to).
    """
    header = imaging.read_header(path)
    target = min(width or header.width, header.width)
    within = imaging.widest_within(header.decoder, header.width, header.height, decode_budget())
    if within:  # 0: no width fits (a GIF or AVIF stored before the ingest check refused such pages)
        target = min(target, within)
    imaging.save(imaging.scaled(path, target), out_path, content_type)


def decode_budget() -> int:
    return settings.IMAGE_DECODE_BUDGET_MB * 1024 * 1024


def stored_copy(original: str, key: str, width: int | None, content_type: str) -> str:
    """The storage name of `original` at `width` as `content_type`, made now if no view asked for it before.

    The original comes as a local path (a temp copy when storage is remote),
    the copy is encoded into a temp file and saved from there: neither is
    ever held in memory whole. FileNotFoundError when the original is missing.
    """
    name = copy_name(original, key, width, _EXTENSIONS[content_type])
    if default_storage.exists(name):
        return name
    ext = _EXTENSIONS[content_type]
    with tempfile.TemporaryDirectory(prefix="mangalord-scaled-", dir=settings.FILE_UPLOAD_TEMP_DIR) as work:
        out_path = os.path.join(work, f"copy.{ext}")
        with local_copy(original) as path:
            if not os.path.exists(path):
                raise FileNotFoundError(f"stored file {original!r} is missing")
            render(path, width, content_type, out_path)
        with open(out_path, "rb") as body:
            saved = default_storage.save(name, File(body, name=name))
    if saved != name:  # another view made it meanwhile; keep theirs
        default_storage.delete(saved)
    return name
