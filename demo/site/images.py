"""Covers and chapter pages drawn with Pillow.

Pages carry large black-on-white text ("CHAPTER 2 PAGE 3" and the title) so an
OCR backend has something real to find. Images are small so a crawl of the
whole demo catalog stays fast. Rendering is cached by content, so a title
change renders new images while repeated fetches cost nothing.
"""

from __future__ import annotations

import io
import random
import textwrap
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

PAGE_SIZE = (600, 850)
COVER_SIZE = (400, 600)
CONTENT_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
_MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "jpeg": b"\xff\xd8\xff\xe0", "webp": b"RIFF\x00\x00\x00\x00WEBPVP8 "}


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _encode(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    options = {"quality": 80} if fmt in ("jpeg", "webp") else {}
    image.save(out, format=fmt.upper(), **options)
    return out.getvalue()


def _draw_lines(draw: ImageDraw.ImageDraw, lines: list[str], top: int, size: int, fill: str) -> int:
    font = _font(size)
    for line in lines:
        draw.text((40, top), line, fill=fill, font=font)
        top += int(size * 1.25)
    return top


@lru_cache(maxsize=512)
def render_page(title: str, chapter_number: str, index: int, fmt: str) -> bytes:
    """One chapter page: a few panel frames around the readable caption."""
    image = Image.new("RGB", PAGE_SIZE, "white")
    draw = ImageDraw.Draw(image)
    rng = random.Random(f"{title}|{chapter_number}|{index}")
    draw.rectangle((20, 20, PAGE_SIZE[0] - 20, PAGE_SIZE[1] - 20), outline="black", width=4)
    for _ in range(3):
        x, y = rng.randint(40, 300), rng.randint(420, 650)
        draw.rectangle((x, y, x + rng.randint(120, 240), y + rng.randint(80, 150)), outline="black", width=3)
    top = _draw_lines(draw, [f"CHAPTER {chapter_number}", f"PAGE {index}"], 60, 48, "black")
    _draw_lines(draw, textwrap.wrap(title, width=20), top + 30, 40, "black")
    return _encode(image, fmt)


@lru_cache(maxsize=256)
def render_cover(title: str, fmt: str) -> bytes:
    rng = random.Random(title)
    background = tuple(rng.randint(150, 250) for _ in range(3))
    image = Image.new("RGB", COVER_SIZE, background)
    draw = ImageDraw.Draw(image)
    draw.rectangle((15, 15, COVER_SIZE[0] - 15, COVER_SIZE[1] - 15), outline="black", width=5)
    _draw_lines(draw, textwrap.wrap(title, width=14), 60, 44, "black")
    return _encode(image, fmt)


def broken_image(fmt: str, length: int = 4096) -> bytes:
    """Bytes that start like `fmt` (so a sniffer lets them in) but are garbage after the magic."""
    garbage = random.Random(length).randbytes(length)
    return _MAGIC[fmt] + garbage
