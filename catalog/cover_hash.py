"""A stored cover's perceptual hash, for series matching: one picture re-encoded or resized keeps its hash.

imagehash's `phash` (DCT of a 32x32 greyscale copy, 64 bits) is what the
duplicate finders of other manga servers compare covers by. The cover is
decoded into a small copy by libvips first (catalog.imaging): a huge cover
is never held at full size, and phash only looks at 32x32 pixels anyway.
"""

from __future__ import annotations

from io import BytesIO

import imagehash
from PIL import Image

from catalog import imaging
from catalog.storage import local_copy

# phash shrinks to 32x32: decoding into a box a few times larger keeps its detail and bounds memory.
_DECODE_WIDTH = 128


def phash_of_path(path: str) -> str:
    """The 16-hex-digit perceptual hash of the image at `path`; catalog.imaging.Undecodable when it is no image."""
    try:
        png = imaging.scaled(path, _DECODE_WIDTH).write_to_buffer(".png")
    except imaging.pyvips.Error as exc:
        raise imaging.Undecodable(str(exc.message).strip()) from exc

    with Image.open(BytesIO(png)) as image:
        return str(imagehash.phash(image.convert("L")))


def stored_cover_hash(name: str) -> str:
    """The hash of the cover stored under `name`; "" when it is missing or does not decode (matching goes on)."""
    if not name:
        return ""
    try:
        with local_copy(name) as path:
            return phash_of_path(path)
    except (FileNotFoundError, imaging.Undecodable):
        return ""
