"""Typed payloads: JSON round-trips, legacy rows, strict decoding with clear errors."""

import json
import uuid

import pytest

from analysis.payloads import AnalyzePage
from crawler.payloads import (
    EnqueueDownloads,
    MetadataPass,
    Reconcile,
    SyncChapterContent,
    SyncChapterList,
    SyncManga,
)
from jobs import kinds
from jobs.kinds import decode
from jobs.payloads import PayloadError

PAGE = uuid.UUID("0b8a8f0e-7d4c-4a53-9d1e-5d0f3b1a2c01")
CHAPTER = uuid.UUID("1c9b9f1f-8e5d-4b64-8e2f-6e1f4c2b3d02")
MANGA = uuid.UUID("2dacaf2f-9f6e-4c75-9f3f-7f2f5d3c4e03")


def _through_json(data: dict) -> dict:
    return json.loads(json.dumps(data))


def test_analyze_page_payload_round_trips_through_tagged_json():
    payload = AnalyzePage(page_id=PAGE, force=True)
    data = _through_json(payload.to_json())
    assert data == {"kind": "analyze_page", "page_id": str(PAGE), "force": True}
    assert decode(data) == payload


def test_analyze_page_legacy_row_without_force_decodes_as_not_forced():
    decoded = decode({"kind": "analyze_page", "page_id": str(PAGE)})
    assert decoded == AnalyzePage(page_id=PAGE, force=False)


def test_sync_manga_payload_round_trips_with_url_and_title():
    payload = SyncManga(
        source_id="target", source_manga_key="foo", url="https://target.example/manga/foo", title="Foo Title"
    )
    data = _through_json(payload.to_json())
    assert data == {
        "kind": "sync_manga",
        "source_id": "target",
        "source_manga_key": "foo",
        "url": "https://target.example/manga/foo",
        "title": "Foo Title",
    }
    assert decode(data) == payload


def test_sync_manga_payload_without_url_is_refused_naming_the_field():
    # Rows that predate the url/title fields got them in jobs migration 0006 (test_pipeline_download).
    with pytest.raises(PayloadError, match="sync_manga payload is missing field 'url'"):
        decode({"kind": "sync_manga", "source_id": "target", "source_manga_key": "foo"})


@pytest.mark.parametrize(
    "payload",
    [
        SyncManga(source_id="s", source_manga_key="k", url="", title=""),
        SyncChapterList(source_id="s", manga_id=MANGA, source_manga_key="k"),
        SyncChapterContent(source_id="s", chapter_id=CHAPTER, source_chapter_key="c"),
        AnalyzePage(page_id=PAGE),
        MetadataPass(source_id="s"),
        Reconcile(source_id="s"),
        EnqueueDownloads(source_id="s"),
    ],
    ids=lambda p: p.kind,
)
def test_every_kind_round_trips_through_json(payload):
    assert decode(_through_json(payload.to_json())) == payload


def test_every_kind_has_a_payload_class():
    assert set(kinds.names()) == {
        "sync_manga",
        "sync_chapter_list",
        "sync_chapter_content",
        "analyze_page",
        "metadata_pass",
        "reconcile",
        "enqueue_downloads",
        "verify_library",
        "notify_send",
    }


def test_uuid_fields_accept_uuid_objects_and_strings_alike():
    assert SyncChapterContent(source_id="s", chapter_id=CHAPTER, source_chapter_key="c") == SyncChapterContent(
        source_id="s", chapter_id=str(CHAPTER), source_chapter_key="c"
    )
    assert AnalyzePage(page_id=str(PAGE)).page_id == PAGE
    assert isinstance(SyncChapterList(source_id="s", manga_id=str(MANGA), source_manga_key="k").manga_id, uuid.UUID)


def test_dedup_key_is_per_kind_and_per_target():
    assert AnalyzePage(page_id=PAGE).dedup_key() == AnalyzePage(page_id=PAGE, force=True).dedup_key()
    assert AnalyzePage(page_id=PAGE).dedup_key() != AnalyzePage(page_id=CHAPTER).dedup_key()
    assert MetadataPass(source_id="s").dedup_key() != Reconcile(source_id="s").dedup_key()
    assert (
        SyncManga(source_id="s", source_manga_key="k", url="", title="a").dedup_key()
        == SyncManga(source_id="s", source_manga_key="k", url="", title="b").dedup_key()
    )


def test_row_refs_name_the_catalog_rows_a_payload_points_at():
    assert SyncChapterContent(source_id="s", chapter_id=CHAPTER, source_chapter_key="c").row_refs() == {
        "manga_id": None,
        "chapter_id": CHAPTER,
        "page_id": None,
    }
    assert MetadataPass(source_id="s").row_refs() == {"manga_id": None, "chapter_id": None, "page_id": None}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "teleport", "x": 1}, "unknown job kind 'teleport'"),
        ({"page_id": str(PAGE)}, "unknown job kind None"),
        (["analyze_page"], "payload must be a JSON object"),
        ("analyze_page", "payload must be a JSON object"),
        ({"kind": "analyze_page"}, "missing field 'page_id'"),
        ({"kind": "analyze_page", "page_id": "not-a-uuid"}, "field 'page_id' is not a valid UUID"),
        ({"kind": "analyze_page", "page_id": 7}, "field 'page_id' must be a UUID string"),
        ({"kind": "analyze_page", "page_id": str(PAGE), "force": "yes"}, "field 'force' must be a boolean"),
        (
            {"kind": "sync_manga", "source_id": 3, "source_manga_key": "k", "url": "", "title": ""},
            "field 'source_id' must be a string",
        ),
        ({"kind": "metadata_pass"}, "missing field 'source_id'"),
    ],
)
def test_decode_rejects_malformed_payloads_with_a_clear_error(data, message):
    with pytest.raises(PayloadError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode(data)


def test_constructor_rejects_wrongly_typed_fields():
    with pytest.raises(PayloadError, match="field 'page_id'"):
        AnalyzePage(page_id=12)


def test_decode_ignores_unknown_extra_fields():
    # Forward compatibility: a newer producer's extra field does not kill the job.
    assert decode({"kind": "reconcile", "source_id": "s", "note": "x"}) == Reconcile(source_id="s")
