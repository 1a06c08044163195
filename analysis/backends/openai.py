"""Analysis by any OpenAI-compatible vision chat-completions endpoint (Ollama, vLLM, llama.cpp, LM Studio).

The page goes up as a base64 data URL, downscaled first when large (vision
models tile or shrink big images anyway, and a 4000 px scan would only cost
upload time and tokens). The model is asked for one strict JSON object and
the answer is validated field by field: anything else is a failed attempt
whose error keeps the raw text, so an operator can see what the model said.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import httpx
from PIL import Image

from analysis.backends.base import AnalysisError, AnalysisResult
from analysis.backends.images import downscaled, encode, open_rgb
from sources.errors import SourceUnavailable

# Long-side limit before upload: the largest size common vision models use without tiling further.
MAX_SIDE = 1568
MAX_TAGS = 20
MAX_TAG_LENGTH = 64
# Formats every OpenAI-compatible server accepts; others are re-encoded as JPEG.
SENT_AS_IS = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}

PROMPT = (
    "You analyse one page of a manga or comic. Answer with exactly one JSON object and nothing else, "
    "with these keys:\n"
    '"text": every legible text on the page (speech bubbles, captions, sound effects) in reading order, '
    'one line per bubble, "" if there is none;\n'
    '"tags": up to 10 short lowercase content tags (for example "action", "dialogue", "school");\n'
    '"description": one or two sentences describing the scene;\n'
    '"nsfw": true if the page shows nudity or sexual content, otherwise false;\n'
    '"score": a number from 0 to 1, how likely the page is NSFW.'
)


class VisionUnavailable(AnalysisError, SourceUnavailable):
    """The endpoint could not be reached, timed out or answered 5xx: an outage, so it feeds the circuit breaker."""


def image_data_url(image_path: str, max_side: int = MAX_SIDE) -> str:
    """The page as a `data:` URL: the original bytes when small and widely supported, else a downscaled JPEG."""
    try:
        with Image.open(image_path) as probe:
            fmt, size = probe.format, probe.size
    except FileNotFoundError as exc:
        raise AnalysisError(f"page image is missing: {image_path}") from exc
    except OSError as exc:
        raise AnalysisError(f"page image cannot be decoded: {exc}") from exc
    if fmt in SENT_AS_IS and max(size) <= max_side:
        with open(image_path, "rb") as f:
            data, mime = f.read(), SENT_AS_IS[fmt]
    else:
        data, mime = encode(downscaled(open_rgb(image_path), max_side), "JPEG"), "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def request_body(model: str, data_url: str) -> dict[str, Any]:
    return {
        "model": model,
        "temperature": 0,
        "max_tokens": 1024,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": PROMPT},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Analyse this page."},
                    {"type": "image_url", "image_url": {"url": data_url}},
                ],
            },
        ],
    }


def completion_content(body_text: str) -> tuple[str, str]:
    """`(content, model)` from a chat-completions response body, or `AnalysisError` keeping the body."""
    try:
        body = json.loads(body_text)
        message = body["choices"][0]["message"]
        content = message["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise AnalysisError("vision endpoint answered something other than a chat completion", raw=body_text) from exc
    if not isinstance(content, str):
        raise AnalysisError("chat completion carries no text content", raw=body_text)
    model = body.get("model") if isinstance(body.get("model"), str) else ""
    return content, model


def _normalise_tags(tags: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for tag in tags:
        clean = " ".join(tag.lower().split())[:MAX_TAG_LENGTH]
        if clean:
            seen.setdefault(clean, None)
    return list(seen)[:MAX_TAGS]


def parse_answer(content: str, model: str) -> AnalysisResult:
    """Validate the model's JSON answer strictly; any deviation is `AnalysisError` with the raw answer kept."""
    try:
        answer = json.loads(content)
    except ValueError as exc:
        raise AnalysisError(f"model output is not valid JSON ({exc})", raw=content) from exc
    if not isinstance(answer, dict):
        raise AnalysisError("model output is not a JSON object", raw=content)
    problems = []
    text, tags, description = answer.get("text"), answer.get("tags"), answer.get("description")
    nsfw, score = answer.get("nsfw"), answer.get("score")
    if not isinstance(text, str):
        problems.append("'text' must be a string")
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        problems.append("'tags' must be a list of strings")
    if not isinstance(description, str):
        problems.append("'description' must be a string")
    if not isinstance(nsfw, bool):
        problems.append("'nsfw' must be true or false")
    # bool is an int in Python; a model answering `"score": true` is wrong, not 1.0.
    if isinstance(score, bool) or not isinstance(score, int | float):
        problems.append("'score' must be a number")
    elif not math.isfinite(score) or not 0.0 <= score <= 1.0:
        problems.append("'score' must be between 0 and 1")
    if problems:
        raise AnalysisError(f"model output failed validation: {'; '.join(problems)}", raw=content)
    assert isinstance(text, str) and isinstance(tags, list) and isinstance(description, str)  # for type checkers
    return AnalysisResult(
        ocr_text=text.strip(),
        tags=_normalise_tags(tags),
        description=description.strip(),
        nsfw=bool(nsfw),
        nsfw_score=float(score),  # type: ignore[arg-type]
        model=model,
    )


class OpenAIVisionBackend:
    name = "openai"

    def __init__(
        self, *, api_url: str, model: str, api_key: str = "", timeout_secs: float, max_side: int = MAX_SIDE
    ) -> None:
        self.url = api_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout_secs = timeout_secs
        self.max_side = max_side

    def analyze(self, image_path: str, content_type: str) -> AnalysisResult:
        # The MIME type sent is the one Pillow sniffs from the bytes, not the
        # stored `content_type`: a source that mislabels its images cannot
        # make us send a data URL the server refuses.
        body = request_body(self.model, image_data_url(image_path, self.max_side))
        content, answered_model = completion_content(self._post(body))
        return parse_answer(content, answered_model or self.model)

    def _post(self, body: dict[str, Any]) -> str:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = httpx.post(self.url, json=body, headers=headers, timeout=self.timeout_secs)
        except httpx.TimeoutException as exc:
            raise VisionUnavailable(f"vision endpoint timed out after {self.timeout_secs:g} s ({self.url})") from exc
        except httpx.HTTPError as exc:
            raise VisionUnavailable(f"vision endpoint unreachable: {exc} ({self.url})") from exc
        if response.status_code >= 500:
            raise VisionUnavailable(f"vision endpoint answered HTTP {response.status_code}", raw=response.text)
        if response.status_code >= 400:
            raise AnalysisError(f"vision endpoint answered HTTP {response.status_code}", raw=response.text)
        return response.text
