"""Images a hostile or broken site serves, made on the fly for tests, fixture sites and benchmarks.

- `garbage_png`: a valid signature and header, then an IDAT of random bytes (valid CRCs).
- `truncated_png`: a real PNG cut off part-way through its pixel data.
- `bomb_png`: a 20000 x 20000 one-bit PNG (400 megapixels) that compresses to about 50 KB.
"""

from __future__ import annotations

import functools
import io
import random
import struct
import zlib

from PIL import Image

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BOMB_SIDE = 20_000


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _header(width: int, height: int, bit_depth: int, colour_type: int) -> bytes:
    return png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0))


def garbage_png(width: int = 640, height: int = 960) -> bytes:
    noise = random.Random(7).randbytes(4096)
    return PNG_SIGNATURE + _header(width, height, 8, 2) + png_chunk(b"IDAT", noise) + png_chunk(b"IEND", b"")


def truncated_png(width: int = 640, height: int = 960) -> bytes:
    pixels = random.Random(11).randbytes(width * height * 3)
    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), pixels).save(out, "PNG")
    whole = out.getvalue()
    return whole[: len(whole) * 3 // 5]


@functools.lru_cache(maxsize=1)
def bomb_png(side: int = BOMB_SIDE) -> bytes:
    row = b"\x00" * (1 + side // 8)  # filter byte + one bit per pixel
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    return PNG_SIGNATURE + _header(side, side, 1, 0) + png_chunk(b"IDAT", body) + png_chunk(b"IEND", b"")
