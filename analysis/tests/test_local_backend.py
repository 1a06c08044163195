"""The local backend: real ONNX models shipped in PyPI packages, run offline."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from PIL import Image, ImageDraw, ImageFont

from analysis.backends.configured import get_backend
from analysis.backends.local import Detection, group_lines, join_words, model_files, summarise
from analysis.tests.helpers import text_page

pytestmark = pytest.mark.sqlite_ok


def test_model_files_ship_inside_the_installed_packages():
    files = model_files()

    assert set(files) == {"ocr_det", "ocr_rec", "ocr_cls", "nsfw"}
    for path in files.values():
        assert path.is_file() and path.stat().st_size > 100_000, path
        assert "site-packages" in str(path) or "dist-packages" in str(path)


def test_finds_the_text_drawn_on_a_page(tmp_path):
    path = tmp_path / "page.png"
    path.write_bytes(text_page("CHAPTER 2 PAGE 3"))

    result = get_backend("local").analyze(str(path), "image/png")

    assert "CHAPTER 2 PAGE 3" in result.ocr_text
    assert "text" in result.tags
    assert result.nsfw is False
    assert "CHAPTER 2 PAGE 3" in result.description
    assert result.model.startswith("rapidocr 3.")


def test_ordinary_photo_gets_a_safe_nsfw_verdict(astronaut_path):
    result = get_backend("local").analyze(astronaut_path, "image/jpeg")

    assert result.nsfw is False
    assert result.nsfw_score < 0.2
    # The detector really looked: it found the (clothed) person's face.
    assert "face-female" in result.tags
    assert "No explicit content detected" in result.description


def test_reads_light_text_on_a_dark_panel(tmp_path):
    image = Image.new("RGB", (1000, 700), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((40, 200, 960, 500), fill="black")
    draw.text((90, 310), "WHITE ON BLACK BOOM", fill="white", font=ImageFont.load_default(size=60))
    path = tmp_path / "panel.png"
    image.save(path)

    assert "WHITE ON BLACK BOOM" in get_backend("local").analyze(str(path), "image/png").ocr_text


def test_reads_webp_pages(tmp_path):
    path = tmp_path / "page.webp"
    path.write_bytes(text_page("PAGE 7", fmt="WEBP"))

    assert "PAGE 7" in get_backend("local").analyze(str(path), "image/webp").ocr_text


@pytest.mark.process
def test_loads_and_runs_with_every_network_connection_forbidden(tmp_path, astronaut_path):
    """A fresh process whose audit hook refuses any socket use: loading both models and analysing must not need it."""
    page = tmp_path / "page.png"
    page.write_bytes(text_page("NO NETWORK"))
    script = textwrap.dedent(
        f"""
        import sys

        def refuse_network(event, args):
            if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "urllib.Request"):
                raise RuntimeError(f"network use attempted: {{event}} {{args!r}}")

        sys.addaudithook(refuse_network)
        import os
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")
        import django
        django.setup()
        from analysis.backends.local import LocalBackend
        backend = LocalBackend()
        print(repr(backend.analyze({str(page)!r}, "image/png").ocr_text))
        print(backend.analyze({astronaut_path!r}, "image/jpeg").nsfw)
        """
    )
    from django.conf import settings

    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(settings.BASE_DIR), "MANGALORD_DATA_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=240)

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-2:] == ["'NO NETWORK'", "False"]


# --- pure parts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("boxes", "lines"),
    [
        ([], []),
        # One caption found as three word boxes, listed out of order: one line, left to right.
        ([(300, 12, 380, 48), (10, 10, 120, 50), (140, 14, 280, 46)], [[1, 2, 0]]),
        # Two lines; a box straddling both overlaps neither enough and stands alone.
        ([(10, 10, 100, 40), (10, 60, 100, 90), (120, 12, 200, 42), (220, 30, 300, 70)], [[0, 2], [3], [1]]),
        # A tall box and a small one beside its middle: overlap counts against the shorter one.
        ([(10, 0, 60, 200), (80, 90, 140, 110)], [[0, 1]]),
    ],
)
def test_group_lines(boxes, lines):
    assert group_lines(boxes) == lines


@pytest.mark.parametrize(
    ("words", "text"),
    [
        (["CHAPTER", "12", "The", "Gate"], "CHAPTER 12 The Gate"),
        ([" WHERE ", "", "AM I?"], "WHERE AM I?"),
        (["日本", "語"], "日本語"),  # CJK is written without spaces
        (["Vol.", "日本"], "Vol.日本"),
    ],
)
def test_join_words(words, text):
    assert join_words(words) == text


def test_summarise_page_without_text_or_figures():
    tags, description, nsfw, score = summarise([], [])

    assert (tags, nsfw, score) == (["no-text"], False, 0.0)
    assert description == (
        "A page without legible text. No people or body parts detected. No explicit content detected."
    )


def test_summarise_text_heavy_page_with_a_face():
    lines = ["x" * 30] * 8
    tags, description, nsfw, _ = summarise(lines, [Detection("FACE_MALE", 0.8), Detection("FEET_COVERED", 0.3)])

    # Weak detections are noise for tagging.
    assert tags == ["text-heavy", "face-male"]
    assert nsfw is False
    assert "8 lines of text" in description and "face male (0.80)" in description


@pytest.mark.parametrize(
    ("detections", "nsfw", "score"),
    [
        ([Detection("FEMALE_BREAST_COVERED", 0.9)], False, 0.0),  # covered is not explicit
        ([Detection("BUTTOCKS_EXPOSED", 0.45)], False, 0.45),  # below the verdict threshold
        ([Detection("BUTTOCKS_EXPOSED", 0.5)], True, 0.5),
        ([Detection("FACE_FEMALE", 0.9), Detection("FEMALE_GENITALIA_EXPOSED", 0.7)], True, 0.7),
    ],
)
def test_summarise_nsfw_verdict_is_the_strongest_explicit_detection(detections, nsfw, score):
    tags, description, got_nsfw, got_score = summarise(["hi"], detections)

    assert (got_nsfw, got_score) == (nsfw, score)
    assert ("nsfw" in tags) is nsfw
    assert ("Explicit content detected." in description) is nsfw
