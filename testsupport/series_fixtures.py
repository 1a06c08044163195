"""Two sites' copies of overlapping series, as the matching table of docs/series.md describes them.

Each case is what real aggregators print for one series (Madara's title,
"Alternative" and "Author(s)" rows, a cover image): the same series under the
same title with the author's name in another order, under a translated title
that the other site lists as an alternative, under two titles with one
cover (one site re-encoded and shrank it, as sites do), a per-volume series,
and two different series that share a title. Covers are drawn from a seed:
the same seed is the same picture; the copy is resized and saved again as a
lower-quality JPEG, which is what a second site's cover usually is.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass

from PIL import Image, ImageDraw


def cover_bytes(seed: int, *, copy: bool = False) -> bytes:
    """A 300x450 cover drawn from `seed`; `copy` is the same picture resized to 240x360 and re-encoded."""
    rng = random.Random(seed)
    image = Image.new("RGB", (300, 450), tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x, y = rng.randrange(300), rng.randrange(450)
        w, h = rng.randrange(40, 200), rng.randrange(40, 250)
        draw.rectangle((x, y, x + w, y + h), fill=tuple(rng.randrange(256) for _ in range(3)))
    out = io.BytesIO()
    if copy:
        image.resize((240, 360)).save(out, "JPEG", quality=70)
    else:
        image.save(out, "PNG")
    return out.getvalue()


@dataclass(frozen=True)
class Copy:
    source: str
    title: str
    alt_titles: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    cover_seed: int | None = None
    cover_copy: bool = False


@dataclass(frozen=True)
class Case:
    name: str
    copies: tuple[Copy, Copy]
    expected: str  # "merge", "suggest" or "none"
    real_series: int  # how many series the two copies really are


CASES = (
    Case(
        "same title, author written in another order",
        (
            Copy("alpha", "The Tide", authors=("Mori Kei",), cover_seed=1),
            Copy("beta", "The Tide", authors=("Kei Mori",)),
        ),
        "merge",
        1,
    ),
    Case(
        "alternative title only",
        (
            Copy("alpha", "Sōsō no Frieren", authors=("Yamada Kanehito",)),
            Copy(
                "beta",
                "Frieren: Beyond Journey's End",
                alt_titles=("Soso no Frieren", "葬送のフリーレン"),
                authors=("Kanehito Yamada",),
            ),
        ),
        "merge",
        1,
    ),
    Case(
        "title collision, different series",
        (
            Copy("alpha", "Revenge", authors=("Aoi Sora",), cover_seed=2),
            Copy("beta", "REVENGE!", authors=("Park Min",), cover_seed=3),
        ),
        "none",
        2,
    ),
    Case(
        "one cover under two titles",
        (
            Copy("alpha", "Hikari no Ou", cover_seed=4),
            Copy("beta", "King of Light", cover_seed=4, cover_copy=True),
        ),
        "suggest",
        1,
    ),
    Case(
        "same title, same cover, no author printed",
        (
            Copy("alpha", "Night Harbour", cover_seed=5),
            Copy("beta", "Night Harbour", cover_seed=5, cover_copy=True),
        ),
        "merge",
        1,
    ),
    Case(
        "same title, nothing to confirm it",
        (Copy("alpha", "Lonely Star"), Copy("beta", "Lonely Star")),
        "suggest",
        1,
    ),
    Case(
        "volume restart (per-volume numbering on one site)",
        (
            Copy("alpha", "Restart", authors=("Ito Jun",), cover_seed=6),
            Copy("beta", "Restart", authors=("Ito Jun",), cover_seed=6, cover_copy=True),
        ),
        "merge",
        1,
    ),
)
