"""Reading page images for analysis: one decoder for both backends, with clear errors."""

from __future__ import annotations

import io

from PIL import Image, UnidentifiedImageError

from analysis.backends.base import AnalysisError

# Decompression-bomb guard: a stored page bigger than this is not a manga page.
MAX_PIXELS = 80_000_000


def open_rgb(image_path: str) -> Image.Image:
    """Decode the image at `image_path` into RGB (first frame of an animation), or raise `AnalysisError`."""
    try:
        with Image.open(image_path) as image:
            if image.width * image.height > MAX_PIXELS:
                raise AnalysisError(f"page image is too large to analyse ({image.width}x{image.height})")
            image.seek(0)
            return image.convert("RGB")
    except FileNotFoundError as exc:
        raise AnalysisError(f"page image is missing: {image_path}") from exc
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise AnalysisError(f"page image cannot be decoded: {exc}") from exc


def downscaled(image: Image.Image, max_side: int) -> Image.Image:
    """`image` shrunk (aspect kept) so its long side is at most `max_side`; unchanged if already small enough."""
    if max(image.size) <= max_side:
        return image
    scale = max_side / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


def encode(image: Image.Image, fmt: str = "JPEG") -> bytes:
    out = io.BytesIO()
    options = {"quality": 90} if fmt == "JPEG" else {}
    image.save(out, format=fmt, **options)
    return out.getvalue()
