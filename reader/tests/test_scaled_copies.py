"""Scaled copies of a page: made at a small fixed set of widths, so asking for many widths stores few copies."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from reader.images import COPY_WIDTHS, cache_width
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic
from testsupport.responses import body_of

pytestmark = pytest.mark.sqlite_ok


@pytest.mark.parametrize(
    ("asked", "made"),
    [(16, 100), (99, 100), (100, 100), (299, 200), (300, 300), (1072, 900), (1080, 1080), (1264, 1080), (4096, 4000)],
)
def test_an_asked_width_is_rounded_down_to_a_copy_width(asked, made):
    assert cache_width(asked) == made


def test_copy_widths_are_few_and_a_copy_is_at_least_three_quarters_of_the_width_asked_above_thumbnails():
    assert list(COPY_WIDTHS) == sorted(set(COPY_WIDTHS)) and len(COPY_WIDTHS) <= 16
    assert all(a / b >= 0.74 for a, b in zip(COPY_WIDTHS[2:], COPY_WIDTHS[3:], strict=False))


def _stored_copies(media_root: str) -> list[Path]:
    return [p for p in Path(media_root, "scaled").rglob("*") if p.is_file()]


@pytest.mark.django_db
def test_114_different_widths_of_one_600px_page_store_at_most_one_copy_per_step_below_it(client, alice, settings):
    src = f.source("demo")
    chapter = f.chapter(f.manga("Berserk", src=src), 1, src=src, pages=1, width=600, height=900)
    page = chapter.pages.get()
    client.force_login(alice)
    asked = list(range(16, 600, 5))[:114]
    assert len(set(asked)) == 114
    for width in asked:
        answer = client.get(f"/read/pages/{page.id}/image/?w={width}")
        assert answer.status_code == 200
        served = Image.open(io.BytesIO(body_of(answer)))
        assert served.width == (cache_width(width) if cache_width(width) < 600 else 600)
    steps_below = [w for w in COPY_WIDTHS if w < 600]
    assert len(_stored_copies(settings.MEDIA_ROOT)) == len(steps_below) == 5


@pytest.mark.django_db
def test_pse_max_widths_share_the_same_copies(client, alice, settings):
    src = f.source("demo")
    chapter = f.chapter(f.manga("Berserk", src=src), 1, src=src, pages=1, width=1200, height=1800)
    auth = basic("alice", PASSWORD)
    for width in (758, 800, 899, 1072, 1080, 1199, 1264, 1300):
        answer = client.get(f"/opds/chapters/{chapter.id}/pages/0/", {"maxWidth": str(width)}, **auth)
        assert answer.status_code == 200
        assert Image.open(io.BytesIO(body_of(answer))).width <= width
    # 720, 900 and 1080; 1300 is wider than the page, which is then served as stored
    assert len(_stored_copies(settings.MEDIA_ROOT)) == 3


@pytest.mark.django_db
def test_the_web_reader_is_told_the_copy_widths_it_asks_for(client, alice):
    src = f.source("demo")
    chapter = f.chapter(f.manga("Berserk", src=src), 1, src=src, pages=1)
    client.force_login(alice)
    page = client.get(f"/read/{chapter.id}/").content.decode()
    assert f'"copyWidths": {list(COPY_WIDTHS)}' in page
