"""Decoding stored images with bounded memory, through libvips (pyvips).

libvips decodes JPEG and PNG in strips as the pixels are consumed, and
`thumbnail` asks the decoder for a smaller image where the format allows it
(JPEG at 1/2 to 1/8 scale, WebP scaled by libwebp), so a 50-megapixel page is
never held at full size. Two decoders cannot stream: GIF (libnsgif) and AVIF
(libheif) hold the whole frame, and WebP holds the frame at the size it is
decoded to. `decode_bytes` is what each costs, measured with
bench/resize_memory.py; the ingest check refuses an image whose smallest
decode would exceed the budget, and the readers never ask for a copy whose
decode would.

Everything here works on a local path: a page kept in remote storage is
streamed to a temp file first (`catalog.storage.local_copy`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyvips

# libvips caches recent operations and their pixels for reuse; a server that
# opens each page once gains nothing from it and would keep frames alive.
pyvips.cache_set_max(0)

# Passed to the loader: a truncated or corrupt body is an error, not a grey band. As an option string,
# because thumbnail's own fail_on argument does not reach the loader (libvips 8.18).
LOAD_OPTIONS = "fail_on=error"
# thumbnail always fits a box: a side this long never binds.
UNBOUNDED = 10_000_000
# The ingest check decodes into a box this small: every byte is read, few pixels are kept.
CHECK_BOX = 64
# Bytes per pixel a decoder holds at once, measured by bench/resize_memory.py
# (50 MP pages; libvips 8.18). WebP: per pixel of the decoded (scaled) frame;
# GIF and AVIF: per pixel of the full frame, whatever the output size.
_FRAME_BYTES = {"image/webp": 9.0, "image/gif": 5.4, "image/avif": 17.0}
_WHOLE_FRAME = frozenset({"image/gif", "image/avif"})
_LOADER_TYPES = {
    "jpegload": "image/jpeg",
    "pngload": "image/png",
    "webpload": "image/webp",
    "gifload": "image/gif",
    "heifload": "image/avif",
}


class Undecodable(Exception):
    """The bytes do not decode as the image their header announces."""


def decode_bytes(content_type: str, width: int, height: int, out_width: int) -> int:
    """Memory a decode of a `width`x`height` image to `out_width` wide holds at once (0: strips only)."""
    per_pixel = _FRAME_BYTES.get(content_type)
    if per_pixel is None:
        return 0
    if content_type in _WHOLE_FRAME or out_width >= width:
        return int(per_pixel * width * height)
    return int(per_pixel * out_width * (height * out_width / width))


def widest_within(content_type: str, width: int, height: int, budget: int) -> int:
    """The widest copy (at most `width`) whose decode stays within `budget` bytes; 0 when none does."""
    if decode_bytes(content_type, width, height, width) <= budget:
        return width
    if content_type in _WHOLE_FRAME:
        return 0
    return max(0, int(width * (budget / decode_bytes(content_type, width, height, width)) ** 0.5))


@dataclass(frozen=True)
class Header:
    width: int
    height: int
    decoder: str  # the type whose decoder reads the file ("image/webp"), whatever its name says

    def decode_bytes(self, out_width: int) -> int:
        return decode_bytes(self.decoder, self.width, self.height, out_width)


def read_header(path: str) -> Header:
    """Size and decoder from the header alone: no pixel is decoded."""
    try:
        image = pyvips.Image.new_from_file(path)
    except pyvips.Error as exc:
        raise Undecodable(_first_line(exc)) from exc
    loader = image.get("vips-loader") if image.get_typeof("vips-loader") else ""
    return Header(image.width, image.height, _LOADER_TYPES.get(loader.removesuffix("_source"), loader))


def check_decodes(path: str, box: int = CHECK_BOX) -> None:
    """Decode every byte of the image at reduced size (JPEG at 1/8, WebP scaled); Undecodable when it fails."""
    try:
        small = pyvips.Image.thumbnail_source(
            pyvips.Source.new_from_file(path), box, height=box, option_string=LOAD_OPTIONS
        )
        small.avg()  # runs the pipeline: every row is read
    except pyvips.Error as exc:
        raise Undecodable(_first_line(exc)) from exc


def scaled(path: str, width: int | None) -> pyvips.Image:
    """The image at `path`, at most `width` wide (None: its own width), decoded lazily in strips."""
    return pyvips.Image.thumbnail_source(
        pyvips.Source.new_from_file(path),
        width or UNBOUNDED,
        height=UNBOUNDED,
        size="down",
        option_string=LOAD_OPTIONS,
    )


def save(image: pyvips.Image, path: str, content_type: str) -> None:
    """Encode `image` into `path` as `content_type` (JPEG, PNG or WebP); JPEG has no alpha: it goes on white."""
    if content_type == "image/jpeg":
        if image.hasalpha():
            image = image.flatten(background=255)
        image.jpegsave(path, Q=85)
    elif content_type == "image/png":
        image.pngsave(path)
    elif content_type == "image/webp":
        image.webpsave(path, Q=85)
    else:
        raise ValueError(f"no encoder for {content_type}")


def _first_line(exc: pyvips.Error) -> str:
    detail = (exc.detail or "").strip().splitlines()
    return detail[-1].strip() if detail else str(exc.message).strip()
