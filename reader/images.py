"""Page images at a requested width: downscaled with Pillow, never upscaled.

The original stays in storage untouched; a smaller copy is encoded in the
page's own format (JPEG stays JPEG, PNG stays PNG) so a client asking for
`maxWidth=800` gets what it can show without decoding a 4000-pixel scan.
"""

from __future__ import annotations

import io

from django.core.files.storage import default_storage
from PIL import Image

MIN_WIDTH = 16
MAX_WIDTH = 4096
_SAVE_FORMATS = {
    "image/jpeg": "JPEG",
    "image/png": "PNG",
    "image/webp": "WEBP",
    "image/gif": "PNG",
    "image/avif": "JPEG",
}
_FORMAT_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}


def parse_width(raw: str | None) -> int | None:
    """A requested width in MIN_WIDTH..MAX_WIDTH, None when absent; ValueError naming the rule otherwise."""
    if raw is None or raw == "":
        return None
    try:
        width = int(raw)
    except ValueError:
        width = 0
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        raise ValueError(f"width must be an integer from {MIN_WIDTH} to {MAX_WIDTH}")
    return width


def needs_downscale(stored_width: int, max_width: int | None) -> bool:
    return max_width is not None and stored_width > max_width


def downscale(name: str, content_type: str, max_width: int) -> tuple[bytes, str]:
    """The stored image `name` at most `max_width` wide: (encoded bytes, content type)."""
    with default_storage.open(name, "rb") as handle, Image.open(handle) as image:
        image.load()
        fmt = _SAVE_FORMATS.get(content_type, "JPEG")
        if image.width > max_width:
            height = max(1, round(image.height * max_width / image.width))
            image = image.resize((max_width, height), Image.Resampling.LANCZOS)
        if fmt == "JPEG" and image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        out = io.BytesIO()
        image.save(out, fmt, **({"quality": 85} if fmt in ("JPEG", "WEBP") else {}))
    return out.getvalue(), _FORMAT_TYPES[fmt]


CONVERSIONS = {"png": ("PNG", "image/png"), "jpeg": ("JPEG", "image/jpeg")}


def convert(name: str, target: str) -> tuple[bytes, str]:
    """The stored image `name` re-encoded as `target` ("png" or "jpeg", Komga's `?convert=`) at full size."""
    fmt, content_type = CONVERSIONS[target]
    with default_storage.open(name, "rb") as handle, Image.open(handle) as image:
        image.load()
        if fmt == "JPEG" and image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        out = io.BytesIO()
        image.save(out, fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return out.getvalue(), content_type
