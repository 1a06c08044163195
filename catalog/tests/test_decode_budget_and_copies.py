"""Pure decisions about decoding and copies: what a decode costs, how wide a copy may be, which copies are stale."""

from __future__ import annotations

import pytest

from catalog.copies import copy_name, orphan_copies
from catalog.imaging import decode_bytes, widest_within

pytestmark = pytest.mark.sqlite_ok
MB = 1024 * 1024


@pytest.mark.parametrize("kind", ["image/jpeg", "image/png"])
def test_strip_decoders_cost_nothing_per_pixel_so_any_width_fits(kind):
    assert decode_bytes(kind, 6123, 8164, 6123) == 0
    assert widest_within(kind, 6123, 8164, 1) == 6123


def test_a_webp_copy_is_made_only_as_wide_as_its_decoded_frame_fits():
    assert decode_bytes("image/webp", 6123, 8164, 800) < 10 * MB
    width = widest_within("image/webp", 6123, 8164, 150 * MB)
    assert 3000 < width < 6123
    assert (
        decode_bytes("image/webp", 6123, 8164, width) <= 150 * MB < decode_bytes("image/webp", 6123, 8164, width + 10)
    )


@pytest.mark.parametrize(("kind", "fits_mp"), [("image/gif", 29), ("image/avif", 9)])
def test_whole_frame_decoders_cost_the_same_at_any_width_so_the_budget_is_a_pixel_cap(kind, fits_mp):
    side = int((fits_mp * 1_000_000) ** 0.5)
    assert decode_bytes(kind, side, side, 64) == decode_bytes(kind, side, side, side) <= 150 * MB
    assert widest_within(kind, side, side, 150 * MB) == side
    assert widest_within(kind, 2 * side, 2 * side, 150 * MB) == 0


def test_copies_of_originals_that_are_gone_are_stale_and_others_are_kept():
    kept, gone = "pages/c1/aaaa.png", "pages/c1/bbbb.jpg"
    names = [
        copy_name(kept, "page", 800, "png"),
        copy_name(gone, "page", 800, "jpg"),
        copy_name(gone, "page", 0, "jpg"),
    ]
    files = [name.rsplit("/", 1)[1] for name in names]
    assert orphan_copies("pages/c1", files, [kept]) == sorted(names[1:])
    # A stem with dashes of its own (a uuid with hyphens) is still matched whole.
    dashed = "covers/m1/0b6f-41c2.jpg"
    assert orphan_copies("covers/m1", [copy_name(dashed, "thumb", 320, "jpg").rsplit("/", 1)[1]], [dashed]) == []
