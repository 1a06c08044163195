"""What an image must pass to be stored: its first bytes, its declared type, its pixel count and its decode.

Pure checks on a prefix or a header, and `checked_size` on the whole file:
each image is decoded once at reduced size (catalog/imaging.py: a JPEG at
1/8 scale, a PNG row by row) after its header passed the pixel cap, so a
garbled body or a decompression bomb never reaches a reader. A JPEG whose
framing proves it whole skips the decode (catalog/jpeg_frame.py).
"""

from __future__ import annotations

from django.conf import settings

from catalog import imaging
from catalog.errors import ImageRejected
from catalog.jpeg_frame import sound_jpeg, sound_jpeg_size

SNIFF_BYTES = 64


def sniff_image_type(prefix: bytes) -> tuple[str, str] | None:
    """(content type, extension) when `prefix` starts like a JPEG, PNG, WebP, GIF or AVIF file."""
    if prefix.startswith(b"\xff\xd8\xff"):
        return "image/jpeg", "jpg"
    if prefix.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png", "png"
    if prefix[:4] == b"RIFF" and prefix[8:12] == b"WEBP":
        return "image/webp", "webp"
    if prefix[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif", "gif"
    if prefix[4:8] == b"ftyp" and (b"avif" in prefix[8:SNIFF_BYTES] or b"avis" in prefix[8:SNIFF_BYTES]):
        return "image/avif", "avif"
    return None


def describe_non_image(prefix: bytes) -> str:
    """What rejected bytes look like, for the error message (an HTML error page is the usual culprit)."""
    head = prefix.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or b"<html" in head:
        return "text/html"
    if head.startswith((b"{", b"[")):
        return "application/json"
    if head.startswith(b"<"):
        return "text/xml or markup"
    if not prefix:
        return "an empty body"
    try:
        prefix.decode("utf-8")
    except UnicodeDecodeError:
        return "unknown binary data"
    return "text"


# Image types a server may declare for an image besides image/*: some CDNs send everything as octet-stream.
_GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})


def check_declared_type(content_type: str) -> None:
    """Refuse a response that says it is not an image (an HTML error page, JSON) before reading its body."""
    declared = content_type.split(";")[0].strip().lower()
    if declared not in _GENERIC_TYPES and not declared.startswith("image/"):
        raise ImageRejected(f"served as {declared!r}, not as an image")


def check_pixels(width: int, height: int, max_pixels: int) -> None:
    if width * height > max_pixels:
        raise ImageRejected(
            f"image is {width}x{height} ({width * height} pixels), over the pixel cap of {max_pixels} "
            "(CRAWLER_MAX_IMAGE_PIXELS): a decompression bomb or a page no reader can show"
        )


def check_decode_budget(header: imaging.Header) -> None:
    """Refuse an image whose decoder would hold more than IMAGE_DECODE_BUDGET_MB even for a small copy.

    Only GIF and AVIF can: their decoders hold the whole frame (about 5 and
    17 bytes a pixel), so the budget is their pixel cap (150 MB: 29 MP GIF,
    9 MP AVIF).
    """
    budget = settings.IMAGE_DECODE_BUDGET_MB
    needed = header.decode_bytes(imaging.CHECK_BOX) / (1024 * 1024)
    if needed > budget:
        raise ImageRejected(
            f"{header.decoder} image is {header.width}x{header.height}: its decoder holds the whole frame "
            f"({needed:.0f} MB), over the decode budget of {budget} MB (IMAGE_DECODE_BUDGET_MB)"
        )


def _sound_jpeg(path: str, body: bytes | None) -> tuple[int, int] | None:
    return sound_jpeg(body) if body is not None else sound_jpeg_size(path)


def checked_size(path: str, content_type: str, max_pixels: int, body: bytes | None = None) -> tuple[int, int]:
    """Width and height, once the whole image is proven to decode within the pixel cap and the decode budget.

    The size comes from the header and is checked before any pixel is
    decoded, so a decompression bomb costs nothing. The image is then decoded
    once at reduced size (a JPEG at 1/8 scale, a PNG row by row): every byte
    is read and checked at a fraction of the memory. A header with a cut or
    garbled body fails here, once, instead of in every reader later.

    A JPEG whose framing proves it whole (`catalog.jpeg_frame`: every segment
    in place, every scan ended, EOI last) skips the decode: a cut or mangled
    transfer shows in the framing, and the walk costs a twenty-fifth of the
    reduced-size decode. Anything the walk cannot vouch for is decoded.
    `body`, when given, is the file's bytes, walked instead of the file.
    """
    if content_type == "image/jpeg" and (size := _sound_jpeg(path, body)) is not None:
        check_pixels(*size, max_pixels)
        return size
    try:
        header = imaging.read_header(path)
        check_pixels(header.width, header.height, max_pixels)
        check_decode_budget(header)
        imaging.check_decodes(path)
    except imaging.Undecodable as exc:
        raise ImageRejected(f"the bytes start like an image but could not be decoded: {exc}") from exc
    return header.width, header.height
