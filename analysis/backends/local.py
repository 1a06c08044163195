"""Offline analysis with models that ship inside PyPI packages: nothing is downloaded at run time.

- OCR: `rapidocr-onnxruntime` carries PaddleOCR's PP-OCRv4 detection and
  recognition models and the mobile direction classifier as ONNX files in its
  wheel (`rapidocr_onnxruntime/models/`). The recognition model reads Latin
  and CJK text.
- NSFW: `nudenet` carries its `320n.onnx` detector (a YOLO model over body
  parts, exposed or covered) in its wheel.

Both run on onnxruntime's CPU provider, for operators without a GPU server.
Tags and the scene description are derived from what the two models find
(`summarise`, a pure function); the NSFW verdict is the strongest
explicit-exposure detection.

Models load once per process, lazily (an `analyze_worker` that never gets a
job never pays the few seconds), behind a lock so concurrent job threads do
not load twice. Inference is serialised by another lock: onnxruntime already
spreads one inference over every core, so parallel calls would only contend.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from analysis.backends.base import AnalysisError, AnalysisResult
from analysis.backends.images import open_rgb

# nudenet labels that make a page explicit (covered parts, faces and feet do not).
EXPLICIT_LABELS = frozenset(
    {
        "FEMALE_BREAST_EXPOSED",
        "FEMALE_GENITALIA_EXPOSED",
        "MALE_GENITALIA_EXPOSED",
        "ANUS_EXPOSED",
        "BUTTOCKS_EXPOSED",
    }
)
NSFW_THRESHOLD = 0.5
# Detections weaker than this are noise for tagging (the detector reports down to 0.2).
TAG_THRESHOLD = 0.4
TEXT_HEAVY_CHARS = 200
TEXT_HEAVY_LINES = 8
# A run of blank pixel columns at least this share of the line height wide is a
# word space. Measured on sans-serif caption type: gaps between letters stay
# under ~0.22 of the line height, gaps between words are ~0.25-0.5.
SPACE_GAP_RATIO = 0.24
# How far (0-255) a pixel must stand off the line's background tone to count as ink.
INK_CONTRAST = 60


@dataclass(frozen=True)
class Detection:
    label: str
    score: float


# --- pure decisions --------------------------------------------------------------------------


def _is_cjk(char: str) -> bool:
    return ord(char) >= 0x2E80


def word_gaps(ink_columns: list[bool], min_gap: float) -> list[float]:
    """Centres of the blank column runs at least `min_gap` wide between the first and last inked column."""
    inked = [i for i, ink in enumerate(ink_columns) if ink]
    if not inked:
        return []
    gaps, run_start = [], None
    for i in range(inked[0], inked[-1] + 1):
        if not ink_columns[i]:
            run_start = i if run_start is None else run_start
            continue
        if run_start is not None and i - run_start >= min_gap:
            gaps.append((run_start + i - 1) / 2)
        run_start = None
    return gaps


def insert_spaces(chars: list[str], centres: list[float], gaps: list[float]) -> str:
    """Join `chars` (left to right, x centre of each in `centres`), with a space wherever a gap lies between two.

    Spaces the recogniser did keep stay as they are; CJK text is written
    without spaces, so none is put next to a CJK character.
    """
    out = []
    for i, char in enumerate(chars):
        if i and not any(_is_cjk(c) or c.isspace() for c in (char, chars[i - 1])):
            if any(centres[i - 1] < gap < centres[i] for gap in gaps):
                out.append(" ")
        out.append(char)
    return "".join(out)


def _ink_columns(gray: np.ndarray, box: list[list[float]]) -> list[bool]:
    """Which pixel columns of the line's box hold ink (pixels far from the box's background tone)."""
    xs, ys = [p[0] for p in box], [p[1] for p in box]
    left, right = max(int(min(xs)), 0), int(max(xs)) + 1
    top, bottom = max(int(min(ys)), 0), int(max(ys)) + 1
    crop = gray[top:bottom, left:right].astype(np.int16)
    if crop.size == 0:
        return []
    background = int(np.median(crop))
    return [bool(v) for v in (np.abs(crop - background) > INK_CONTRAST).any(axis=0)]


def _spaced_line(gray: np.ndarray, item: list[Any]) -> str:
    """The recognised text of one OCR line, with the word spaces the recogniser dropped put back.

    PP-OCR's recogniser drops most spaces in Latin text ("CHAPTER2"). The
    spaces are recovered geometrically: blank pixel columns in the line at
    least `SPACE_GAP_RATIO` of the line height wide are word gaps, placed
    between the per-character positions the recogniser reports.
    """
    text = item[1]
    if len(item) < 5:
        return text
    box, char_boxes, chars = item[0], item[3], list(item[4])
    width = max(p[0] for p in box) - min(p[0] for p in box)
    height = max(p[1] for p in box) - min(p[1] for p in box)
    if len(chars) != len(char_boxes) or len(chars) < 2 or height <= 0 or height > width:
        return text  # vertical or unusual lines: keep what was recognised
    centres = [sum(p[0] for p in b) / len(b) for b in char_boxes]
    if centres != sorted(centres):
        return text  # a line read right to left (rotated); positions do not map to columns
    gaps = word_gaps(_ink_columns(gray, box), SPACE_GAP_RATIO * height)
    left = max(int(min(p[0] for p in box)), 0)
    return insert_spaces(chars, centres, [left + g for g in gaps])


def _label_tag(label: str) -> str:
    return label.lower().replace("_", "-")


def _label_words(label: str) -> str:
    words = label.lower().split("_")
    state = words.pop() if words[-1] in ("exposed", "covered") else ""
    return " ".join([state, *words] if state else words)


def summarise(lines: list[str], detections: list[Detection]) -> tuple[list[str], str, bool, float]:
    """`(tags, description, nsfw, nsfw_score)` from the OCR lines and the detector's findings."""
    chars = sum(len(line) for line in lines)
    tags: list[str] = []
    if not lines:
        tags.append("no-text")
    elif chars >= TEXT_HEAVY_CHARS or len(lines) >= TEXT_HEAVY_LINES:
        tags.append("text-heavy")
    else:
        tags.append("text")
    strongest: dict[str, float] = {}
    for d in detections:
        if d.score >= TAG_THRESHOLD:
            strongest[d.label] = max(d.score, strongest.get(d.label, 0.0))
    score = max((d.score for d in detections if d.label in EXPLICIT_LABELS), default=0.0)
    nsfw = score >= NSFW_THRESHOLD
    tags.extend(_label_tag(label) for label in sorted(strongest, key=lambda k: -strongest[k]))
    if nsfw:
        tags.append("nsfw")

    if lines:
        first = lines[0] if len(lines[0]) <= 60 else lines[0][:57] + "..."
        noun = "line" if len(lines) == 1 else "lines"
        text_part = f"A page with {len(lines)} {noun} of text, beginning \u201c{first}\u201d."
    else:
        text_part = "A page without legible text."
    if strongest:
        found = ", ".join(f"{_label_words(label)} ({strongest[label]:.2f})" for label in strongest)
        figure_part = f" Detected: {found}."
    else:
        figure_part = " No people or body parts detected."
    verdict = " Explicit content detected." if nsfw else " No explicit content detected."
    return tags, text_part + figure_part + verdict, nsfw, round(float(score), 4)


# --- models ----------------------------------------------------------------------------------


def _package_dir(module: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise AnalysisError(f"local backend needs the {module} package, which is not installed")
    return Path(spec.origin).parent


def model_files() -> dict[str, Path]:
    """The ONNX files the local backend runs, inside their packages."""
    ocr = _package_dir("rapidocr_onnxruntime") / "models"
    return {
        "ocr_det": ocr / "ch_PP-OCRv4_det_infer.onnx",
        "ocr_rec": ocr / "ch_PP-OCRv4_rec_infer.onnx",
        "ocr_cls": ocr / "ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "nsfw": _package_dir("nudenet") / "320n.onnx",
    }


def model_name() -> str:
    ocr, nude = metadata.version("rapidocr-onnxruntime"), metadata.version("nudenet")
    return f"rapidocr-onnxruntime {ocr} (PP-OCRv4) + nudenet {nude} (320n)"


class _Models:
    def __init__(self) -> None:
        self._load_lock = threading.Lock()
        self.inference_lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def get(self) -> tuple[Any, Any]:
        if self._loaded is None:
            with self._load_lock:
                if self._loaded is None:
                    self._loaded = self._load()
        return self._loaded

    @staticmethod
    def _load() -> tuple[Any, Any]:
        missing = [str(path) for path in model_files().values() if not path.is_file()]
        if missing:
            # Never fall back to fetching weights: say what is missing instead.
            raise AnalysisError(f"local backend model files are missing: {', '.join(missing)}")
        from nudenet import NudeDetector
        from rapidocr_onnxruntime import RapidOCR

        return RapidOCR(), NudeDetector()


MODELS = _Models()


def _ocr_lines(gray: np.ndarray, raw: list[Any] | None) -> list[str]:
    lines = []
    for item in raw or []:
        text = " ".join(_spaced_line(gray, item).split())
        if text:
            lines.append(text)
    return lines


class LocalBackend:
    name = "local"

    def analyze(self, image_path: str, content_type: str) -> AnalysisResult:
        # Decode with Pillow (GIF, WebP, palette images...) and hand both models
        # the BGR array that OpenCV's own reader would produce.
        rgb = open_rgb(image_path)
        bgr = np.ascontiguousarray(np.asarray(rgb)[:, :, ::-1])
        ocr, detector = MODELS.get()
        with MODELS.inference_lock:
            try:
                raw, _elapsed = ocr(bgr, return_word_box=True)
                found = detector.detect(bgr)
            except Exception as exc:  # onnxruntime/OpenCV errors carry no common base class
                raise AnalysisError(f"local inference failed: {type(exc).__name__}: {exc}") from exc
        detections = [Detection(d["class"], float(d["score"])) for d in found]
        lines = _ocr_lines(np.asarray(rgb.convert("L")), raw)
        tags, description, nsfw, score = summarise(lines, detections)
        return AnalysisResult(
            ocr_text="\n".join(lines),
            tags=tags,
            description=description,
            nsfw=nsfw,
            nsfw_score=score,
            model=model_name(),
        )
