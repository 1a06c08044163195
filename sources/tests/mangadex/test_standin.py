"""The stand-in's checker is a real check: what breaks MangaDex's description is caught, what follows it passes."""

from __future__ import annotations

import json

import httpx

from testsupport.mangadex.openapi import VERSION, exchange_errors, spec
from testsupport.mangadex.server import Exchange


def api(path, query, body, status=200) -> Exchange:
    return Exchange("api", "GET", path, query, {}, b"", status, {}, json.dumps(body).encode())


LIST = {"result": "ok", "response": "collection", "data": [], "limit": 100, "offset": 0, "total": 0}


def test_the_description_is_mangadex_5_10_0():
    assert spec()["info"]["version"] == VERSION


def test_a_request_the_description_does_not_allow_is_caught():
    assert exchange_errors(api("/manga", {"limit": ["100"], "order[latestUploadedChapter]": ["desc"]}, LIST)) == []
    assert exchange_errors(api("/manga", {"limit": ["1000"]}, LIST))  # over the maximum of 100
    assert exchange_errors(api("/manga", {"order[latestUploadedChapter]": ["newest"]}, LIST))  # not asc/desc
    assert exchange_errors(api("/manga", {"translatedLanguage[]": ["en"]}, LIST))  # a feed parameter on /manga
    assert exchange_errors(api("/manga", {"contentRating[]": ["spicy"]}, LIST))
    assert exchange_errors(api("/manga/not-a-uuid/feed", {}, LIST))  # the path's id is a UUID


def test_an_answer_the_description_does_not_allow_is_caught():
    assert exchange_errors(api("/manga", {}, {**LIST, "total": "many"}))
    titled = {"id": "7f1d6c52-1b3e-4a07-9a33-6d2c0c4f1a01", "type": "manga", "attributes": {"title": {"en": "A Title"}}}
    assert exchange_errors(api("/manga", {}, {**LIST, "data": [titled]})) == []  # the LocalizedString quirk
    assert exchange_errors(api("/manga", {}, {**LIST, "data": [{**titled, "type": "chapter"}]}))
    assert exchange_errors(api("/manga", {}, {"result": "error", "errors": []}, status=418))


def test_the_report_is_checked_against_the_docs_fields():
    report = {
        "url": "https://x.mangadex.network/t/data/h/1.png",
        "success": True,
        "cached": False,
        "bytes": 5,
        "duration": 9,
    }
    exchange = Exchange("report", "POST", "/report", {}, {}, json.dumps(report).encode())
    assert exchange_errors(exchange) == []
    exchange.body = json.dumps({k: v for k, v in report.items() if k != "cached"}).encode()
    assert exchange_errors(exchange)


def test_the_standin_refuses_what_mangadex_refuses(mangadex_standin):
    with httpx.Client(base_url=mangadex_standin.api.url) as client:
        assert client.get("/manga", params={"limit": 100, "offset": 9_950}).status_code == 400  # past the window
        assert client.get("/manga/00000000-0000-4000-8000-000000000000").status_code == 404
        answer = client.get("/manga", params={"limit": 100})
    assert answer.json()["total"] == len(mangadex_standin.catalog)
