"""Page images at a requested width and type: scaled once with bounded memory, then kept in storage.

The original stays in storage untouched. A smaller (or converted) copy is
made the first time a width is asked for and saved under `scaled/`, so later
views stream it like any stored file. Making one stays within bounds:
`Image.thumbnail` asks the JPEG decoder for a 1/2, 1/4 or 1/8-scale decode
(`draft`) and shrinks other formats with `reduce` before the final resample,
so a 50-megapixel JPEG is never held at full size; the pixel cap checked at
ingest (CATALOG_MAX_IMAGE_PIXELS) bounds the rest. Widths are rounded down to
a multiple of 10, so one page has a bounded number of copies.

OPDS-PSE 1.2 allows only JPEG, GIF and PNG: a PSE stream declares one of
them per chapter (`pse_type`) and pages stored in another type are served
converted to it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image

MIN_WIDTH = 16
MAX_WIDTH = 4096
WIDTH_STEP = 10
PSE_TYPES = frozenset({"image/jpeg", "image/gif", "image/png"})
# What a scaled copy of each stored type is encoded as (GIF and AVIF: no animation or AVIF encoder needed).
_SCALED_TYPES = {
    "image/jpeg": "image/jpeg",
    "image/png": "image/png",
    "image/webp": "image/webp",
    "image/gif": "image/png",
    "image/avif": "image/jpeg",
}
_FORMATS = {"image/jpeg": ("JPEG", "jpg"), "image/png": ("PNG", "png"), "image/webp": ("WEBP", "webp")}


def parse_width(raw: str | None) -> int | None:
    """A requested width in MIN_WIDTH..MAX_WIDTH, None when absent; ValueError naming the rule otherwise."""
    if raw is None or raw == "":
        return None
    try:
        width = int(raw) if len(raw) <= 6 else 0
    except ValueError:
        width = 0
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        raise ValueError(f"width must be an integer from {MIN_WIDTH} to {MAX_WIDTH}")
    return width


def needs_downscale(stored_width: int, max_width: int | None) -> bool:
    return max_width is not None and stored_width > max_width


def cache_width(width: int) -> int:
    """The width a copy is made at: `width` rounded down to a multiple of WIDTH_STEP (never below MIN_WIDTH)."""
    return max(MIN_WIDTH, width - width % WIDTH_STEP)


def scaled_type(content_type: str) -> str:
    return _SCALED_TYPES.get(content_type, "image/jpeg")


def pse_type(stored_types: Iterable[str]) -> str:
    """The one type a chapter's PSE stream declares: its pages' own type when they share an allowed one, else JPEG."""
    kinds = set(stored_types)
    if len(kinds) == 1 and (only := next(iter(kinds))) in PSE_TYPES:
        return only
    return "image/jpeg"


def scaled_name(original: str, key: str, width: int | None, content_type: str) -> str:
    """Storage name of a copy: under scaled/, built from the original's own (id-made) name, never a source string."""
    stem = original.rsplit(".", 1)[0]
    return f"scaled/{stem}-{key}-w{width or 0}.{_FORMATS[content_type][1]}"


def render(handle: io.BufferedIOBase, width: int | None, content_type: str) -> bytes:
    """The image in `handle` at most `width` wide (None: as wide as it is), encoded as `content_type`."""
    with Image.open(handle) as image:
        if width is not None and image.width > width:
            # draft (JPEG) and reduce (others) keep the full-size image out of memory where the format allows.
            # The box is the exact target: thumbnail asks the decoder for a draft of the box it is given.
            height = max(1, round(image.height * width / image.width))
            image.thumbnail((width, height), Image.Resampling.LANCZOS, reducing_gap=2.0)
        else:
            image.load()
        fmt = _FORMATS[content_type][0]
        if fmt == "JPEG":
            image = _flattened(image)
        elif image.mode not in ("RGB", "RGBA", "L", "LA", "P", "1"):
            image = image.convert("RGBA")
        out = io.BytesIO()
        image.save(out, fmt, **({"quality": 85} if fmt in ("JPEG", "WEBP") else {}))
    return out.getvalue()


def _flattened(image: Image.Image) -> Image.Image:
    """JPEG has no alpha: transparent parts become white, as readers show them on a page."""
    if image.mode in ("RGB", "L"):
        return image
    if image.mode in ("RGBA", "LA", "P", "PA"):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")


def stored_copy(original: str, key: str, width: int | None, content_type: str) -> str:
    """The storage name of `original` at `width` as `content_type`, made now if no view asked for it before."""
    name = scaled_name(original, key, width, content_type)
    if default_storage.exists(name):
        return name
    with default_storage.open(original, "rb") as handle:
        body = render(handle, width, content_type)
    saved = default_storage.save(name, ContentFile(body))
    if saved != name:  # another view made it meanwhile; keep theirs
        default_storage.delete(saved)
    return name
