"""Reading a page's body under the cap, pure: identity, gzip, deflate (zlib-wrapped or raw), what is refused."""

from __future__ import annotations

import gzip
import zlib

import pytest

from fetch.page_body import BodyTooLarge, UnaskedEncoding, declared_length, decode_text, read_capped

PAGE = b"<html><body>" + b"<p>chapter</p>" * 1000 + b"</body></html>"


def _chunks(data: bytes, size: int = 1000) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("coding", "encoded"),
    [
        ("", PAGE),
        ("identity", PAGE),
        ("gzip", gzip.compress(PAGE)),
        ("x-gzip", gzip.compress(PAGE)),
        ("deflate", zlib.compress(PAGE)),
        ("deflate", _raw_deflate(PAGE)),
        (" GZIP ", gzip.compress(PAGE)),
    ],
)
def test_a_body_under_the_cap_is_read_whole_in_its_coding(coding, encoded):
    assert read_capped(_chunks(encoded), content_encoding=coding, cap=len(PAGE)) == PAGE


@pytest.mark.parametrize("coding", ["", "gzip", "deflate"])
def test_one_byte_over_the_cap_is_refused(coding):
    encoded = {"": PAGE, "gzip": gzip.compress(PAGE), "deflate": zlib.compress(PAGE)}[coding]
    with pytest.raises(BodyTooLarge, match=f"over the {len(PAGE) - 1}-byte cap"):
        read_capped(_chunks(encoded), content_encoding=coding, cap=len(PAGE) - 1)


def test_a_bomb_in_one_chunk_is_inflated_no_further_than_the_cap():
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024))  # 64 MiB in about 64 KiB, handed over at once
    with pytest.raises(BodyTooLarge):
        read_capped([bomb], content_encoding="gzip", cap=1024 * 1024)


def test_an_encoding_we_did_not_ask_for_is_refused():
    with pytest.raises(UnaskedEncoding, match="br-encoded, which was not asked for"):
        read_capped([b"..."], content_encoding="br", cap=100)


def test_a_broken_or_cut_gzip_stream_is_an_error_not_a_page():
    with pytest.raises(zlib.error):
        read_capped([b"\x1f\x8b\x08\x00garbage"], content_encoding="gzip", cap=100)
    with pytest.raises(zlib.error, match="ends before its compressed stream does"):
        read_capped([gzip.compress(PAGE)[:-20]], content_encoding="gzip", cap=len(PAGE))
    assert read_capped([], content_encoding="gzip", cap=100) == b""  # an empty answer (204, HEAD) is no stream


@pytest.mark.parametrize(
    ("value", "length"), [("12", 12), (" 7 ", 7), ("", None), ("-1", None), ("1e9", None), ("²", None)]
)
def test_only_an_ascii_number_is_a_declared_length(value, length):
    assert declared_length({"content-length": value}) == length


def test_text_is_decoded_in_its_charset_and_utf8_when_none_or_unknown():
    assert decode_text("Ça".encode("latin-1"), "iso-8859-1") == "Ça"
    assert decode_text("Ça".encode(), None) == "Ça"
    assert decode_text("Ça".encode(), "no-such-charset") == "Ça"
    assert decode_text(b"\xff", None) == "\ufffd"
