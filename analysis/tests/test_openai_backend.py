"""The openai backend against a real HTTP server standing in for the vision endpoint, and its pure parts."""

from __future__ import annotations

import json

import pytest

from analysis.backends.base import AnalysisError
from analysis.backends.configured import get_backend
from analysis.backends.openai import MAX_SIDE, OpenAIVisionBackend, VisionUnavailable, parse_answer
from analysis.tests.helpers import text_page
from testsupport.vision_standin import VisionStandIn, answer_json

pytestmark = pytest.mark.sqlite_ok


def _write(tmp_path, data: bytes, name: str = "page.png") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_good_answer_is_parsed_and_the_page_is_sent_as_a_data_url(tmp_path, vision_server, settings):
    settings.VISION_API_KEY = "sekrit"
    vision_server.good(text="WHAT?!", tags=["Action", "action", " Night  Scene "], nsfw=False, score=0.1)
    result = get_backend().analyze(_write(tmp_path, text_page(size=(600, 850))), "image/png")

    assert result.ocr_text == "WHAT?!"
    assert result.tags == ["action", "night scene"]
    assert result.nsfw is False and result.nsfw_score == 0.1
    assert result.model == "standin-vision"
    (request,) = vision_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sekrit"
    assert request.body["model"] == "standin-vision"
    assert request.body["response_format"] == {"type": "json_object"}
    # A small PNG goes up as it is.
    assert request.image_mime() == "image/png"
    assert request.image().size == (600, 850)


def test_large_page_is_downscaled_to_the_long_side_limit_before_sending(tmp_path, vision_server):
    get_backend().analyze(_write(tmp_path, text_page(size=(1200, 3000))), "image/png")

    (request,) = vision_server.requests
    sent = request.image()
    assert max(sent.size) == MAX_SIDE
    assert sent.size == (round(1200 * MAX_SIDE / 3000), MAX_SIDE)
    assert request.image_mime() == "image/jpeg"


def test_no_bearer_header_without_an_api_key(tmp_path, vision_server):
    get_backend().analyze(_write(tmp_path, text_page()), "image/png")

    assert "Authorization" not in vision_server.requests[0].headers


def test_malformed_model_output_fails_with_the_raw_text_kept(tmp_path, vision_server):
    vision_server.content("Sure! Here is the analysis: {text: 'HELLO'")

    with pytest.raises(AnalysisError) as caught:
        get_backend().analyze(_write(tmp_path, text_page()), "image/png")

    assert "not valid JSON" in str(caught.value)
    assert caught.value.raw == "Sure! Here is the analysis: {text: 'HELLO'"
    assert "Sure! Here is the analysis" in str(caught.value)


def test_http_500_fails_as_unavailable_with_the_body_kept(tmp_path, vision_server):
    vision_server.error(500, '{"error": "CUDA out of memory"}')

    with pytest.raises(VisionUnavailable) as caught:
        get_backend().analyze(_write(tmp_path, text_page()), "image/png")

    assert "HTTP 500" in str(caught.value)
    assert "CUDA out of memory" in str(caught.value)


def test_http_404_is_a_failed_attempt_but_not_an_outage(tmp_path, vision_server):
    vision_server.error(404, '{"error": "model \\"llava\\" not found"}')

    with pytest.raises(AnalysisError) as caught:
        get_backend().analyze(_write(tmp_path, text_page()), "image/png")

    assert not isinstance(caught.value, VisionUnavailable)
    assert "not found" in caught.value.raw


def test_endpoint_hanging_past_the_timeout_fails_the_attempt(tmp_path, vision_server, settings):
    settings.VISION_TIMEOUT_SECS = 0.5
    vision_server.hang()  # released by the fixture at teardown

    with pytest.raises(VisionUnavailable) as caught:
        get_backend().analyze(_write(tmp_path, text_page()), "image/png")

    assert "timed out after 0.5 s" in str(caught.value)
    assert len(vision_server.requests) == 1


def test_response_that_is_not_a_chat_completion_fails_with_the_body_kept(tmp_path, vision_server):
    vision_server.error(200, "<html>proxy login</html>")

    with pytest.raises(AnalysisError) as caught:
        get_backend().analyze(_write(tmp_path, text_page()), "image/png")

    assert caught.value.raw == "<html>proxy login</html>"


def test_unreachable_endpoint_is_unavailable(tmp_path):
    with VisionStandIn() as server:
        url = server.url  # the port is closed once the stand-in stops
    backend = OpenAIVisionBackend(api_url=url, model="m", timeout_secs=2)

    with pytest.raises(VisionUnavailable, match="unreachable"):
        backend.analyze(_write(tmp_path, text_page()), "image/png")


def test_unreadable_image_fails_before_any_request(tmp_path, vision_server):
    with pytest.raises(AnalysisError, match="cannot be decoded"):
        get_backend().analyze(_write(tmp_path, b"not an image"), "image/png")

    assert vision_server.requests == []


# --- parse_answer: strict validation, one row per rule ------------------------------------


def _answer(**overrides) -> str:
    data = json.loads(answer_json())
    data.update(overrides)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[1, 2]", "not a JSON object"),
        ("```json\n{}\n```", "not valid JSON"),
        (_answer(text=None), "'text' must be a string"),
        (_answer(tags="action"), "'tags' must be a list of strings"),
        (_answer(tags=["ok", 3]), "'tags' must be a list of strings"),
        (_answer(description=["x"]), "'description' must be a string"),
        (_answer(nsfw="no"), "'nsfw' must be true or false"),
        (_answer(score="0.3"), "'score' must be a number"),
        (_answer(score=True), "'score' must be a number"),
        (_answer(score=1.5), "'score' must be between 0 and 1"),
        (_answer(score=-0.1), "'score' must be between 0 and 1"),
        ('{"text": "", "tags": [], "description": "", "nsfw": false, "score": NaN}', "between 0 and 1"),
        (json.dumps({"text": "hi"}), "'tags' must be a list of strings"),
    ],
)
def test_parse_answer_rejects(content, problem):
    with pytest.raises(AnalysisError, match=problem) as caught:
        parse_answer(content, model="m")
    assert caught.value.raw == content


@pytest.mark.parametrize("score", [0, 1, 0.5])
def test_parse_answer_accepts_scores_on_the_closed_interval(score):
    assert parse_answer(_answer(score=score), model="m").nsfw_score == float(score)


def test_parse_answer_normalises_tags_and_trims_text():
    result = parse_answer(_answer(text="  HI \n", tags=["A", "a", "", "  b  c "], description=" d "), model="m")

    assert (result.ocr_text, result.tags, result.description) == ("HI", ["a", "b c"], "d")
