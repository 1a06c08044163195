"""Offline analysis with models that ship inside PyPI packages: nothing is downloaded at run time.

- OCR: `rapidocr` carries PaddleOCR's PP-OCRv6 small detection and
  recognition models and the mobile direction classifier as ONNX files in its
  wheel (`rapidocr/models/`), and needs only `opencv-python-headless` (the one
  OpenCV in the environment, shared with nudenet). The recognition model
  reads Latin and CJK text.
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
# Two boxes are on one text line when their vertical overlap is at least this share of the shorter one.
SAME_LINE_OVERLAP = 0.5


@dataclass(frozen=True)
class Detection:
    label: str
    score: float


# --- pure decisions --------------------------------------------------------------------------


def _is_cjk(char: str) -> bool:
    return ord(char) >= 0x2E80


def group_lines(boxes: list[tuple[float, float, float, float]]) -> list[list[int]]:
    """Indexes of `(left, top, right, bottom)` boxes grouped into text lines, top to bottom, each left to right.

    The detector finds words (or runs of words) as separate boxes; a box
    joins the line it overlaps vertically by SAME_LINE_OVERLAP of the
    shorter height, so a caption reads as one line, not one word per line.
    """
    lines: list[list[int]] = []
    spans: list[tuple[float, float]] = []
    for i in sorted(range(len(boxes)), key=lambda k: (boxes[k][1], boxes[k][0])):
        top, bottom = boxes[i][1], boxes[i][3]
        for n, (line_top, line_bottom) in enumerate(spans):
            overlap = min(bottom, line_bottom) - max(top, line_top)
            if overlap >= SAME_LINE_OVERLAP * min(bottom - top, line_bottom - line_top):
                lines[n].append(i)
                spans[n] = (min(top, line_top), max(bottom, line_bottom))
                break
        else:
            lines.append([i])
            spans.append((top, bottom))
    return [sorted(line, key=lambda k: boxes[k][0]) for line in lines]


def join_words(words: list[str]) -> str:
    """Words of one line joined by spaces, except next to CJK characters (written without spaces)."""
    out = ""
    for word in (w.strip() for w in words):
        if not word:
            continue
        if out and not (_is_cjk(out[-1]) or _is_cjk(word[0])):
            out += " "
        out += word
    return out


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

# The models rapidocr's wheel ships (rapidocr/models/).
OCR_MODELS = {
    "det": "PP-OCRv6_det_small.onnx",
    "rec": "PP-OCRv6_rec_small.onnx",
    "cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
}


def _package_dir(module: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise AnalysisError(f"local backend needs the {module} package, which is not installed")
    return Path(spec.origin).parent


def model_files() -> dict[str, Path]:
    """The ONNX files the local backend runs, inside their packages."""
    ocr = _package_dir("rapidocr") / "models"
    return {
        "ocr_det": ocr / OCR_MODELS["det"],
        "ocr_rec": ocr / OCR_MODELS["rec"],
        "ocr_cls": ocr / OCR_MODELS["cls"],
        "nsfw": _package_dir("nudenet") / "320n.onnx",
    }


def model_name() -> str:
    ocr, nude = metadata.version("rapidocr"), metadata.version("nudenet")
    return f"rapidocr {ocr} (PP-OCRv6 small) + nudenet {nude} (320n)"


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
        from rapidocr import RapidOCR

        files = model_files()
        # The wheel's own files, named explicitly: rapidocr never looks for (or fetches) another model.
        params = {
            "Global.log_level": "warning",
            "Det.model_path": str(files["ocr_det"]),
            "Rec.model_path": str(files["ocr_rec"]),
            "Cls.model_path": str(files["ocr_cls"]),
        }
        return RapidOCR(params=params), NudeDetector()

    @property
    def loaded(self) -> bool:
        return self._loaded is not None


MODELS = _Models()


def _ocr_lines(output: Any) -> list[str]:
    """The text lines of rapidocr's answer: each box's words, boxes on one line joined left to right."""
    if output.boxes is None or output.txts is None:
        return []
    words = output.word_results or [()] * len(output.txts)
    texts = [
        join_words([w[0] for w in box_words]) if box_words else text
        for text, box_words in zip(output.txts, words, strict=True)
    ]
    boxes = [
        (min(p[0] for p in b), min(p[1] for p in b), max(p[0] for p in b), max(p[1] for p in b)) for b in output.boxes
    ]
    lines = (join_words([texts[i] for i in line]) for line in group_lines(boxes))
    return [" ".join(line.split()) for line in lines if line.strip()]


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
                output = ocr(bgr, return_word_box=True)
                found = detector.detect(bgr)
            except Exception as exc:  # onnxruntime/OpenCV errors carry no common base class
                raise AnalysisError(f"local inference failed: {type(exc).__name__}: {exc}") from exc
        detections = [Detection(d["class"], float(d["score"])) for d in found]
        lines = _ocr_lines(output)
        tags, description, nsfw, score = summarise(lines, detections)
        return AnalysisResult(
            ocr_text="\n".join(lines),
            tags=tags,
            description=description,
            nsfw=nsfw,
            nsfw_score=score,
            model=model_name(),
        )
