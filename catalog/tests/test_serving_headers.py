"""The responder's header decisions, tested directly: ETag matching, byte ranges, the accel location."""

import pytest
from django.core.files.storage import FileSystemStorage, Storage

from catalog.serving.accel import accel_location
from catalog.serving.headers import ByteRange, Unsatisfiable, byte_range, etag_matches, quoted_etag


@pytest.mark.parametrize(
    ("header", "matches"),
    [('"abc"', True), ('W/"abc"', True), ('"x", "abc"', True), ("*", True), ('"abcd"', False), ("", False)],
)
def test_if_none_match_names_the_etag(header, matches):
    assert etag_matches(header, quoted_etag("abc")) is matches


def test_no_etag_never_matches():
    assert etag_matches("*", quoted_etag("")) is False


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-99", ByteRange(0, 99, 1000)),
        ("bytes=900-", ByteRange(900, 999, 1000)),
        ("bytes=-100", ByteRange(900, 999, 1000)),
        ("bytes=-5000", ByteRange(0, 999, 1000)),
        ("bytes=990-5000", ByteRange(990, 999, 1000)),
        ("", None),
        ("bytes=", None),
        ("bytes=-", None),
        ("items=0-9", None),
        ("bytes=0-9,20-29", None),
        ("bytes=50-10", None),
    ],
)
def test_byte_range_reads_one_range_or_answers_the_whole_file(header, expected):
    assert byte_range(header, 1000) == expected


@pytest.mark.parametrize("header", ["bytes=1000-", "bytes=5000-6000", "bytes=-0"])
def test_a_range_past_the_end_is_unsatisfiable(header):
    with pytest.raises(Unsatisfiable):
        byte_range(header, 1000)


def test_a_range_names_its_length_and_content_range():
    wanted = ByteRange(10, 19, 100)
    assert (wanted.length, wanted.content_range) == (10, "bytes 10-19/100")


def test_accel_location_only_for_local_storage_when_set(tmp_path):
    local = FileSystemStorage(location=tmp_path)
    assert accel_location("pages/ab/c d.png", "/protected/", local) == "/protected/pages/ab/c%20d.png"
    assert accel_location("pages/a.png", "", local) == ""
    assert accel_location("pages/a.png", "/protected/", Storage()) == ""
