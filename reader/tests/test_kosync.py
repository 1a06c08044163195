"""KOReader sync: byte-identical CBZs, KOReader's document digest of a downloaded CBZ, progress both ways.

`koreader_partial_md5` below is a line-by-line port of KOReader's
`util.partialMD5` (frontend/util.lua), seek and read on the file itself,
kept apart from the streaming implementation it checks.
"""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
import time_machine
from django.test import Client, override_settings
from lxml import etree

from accounts import api_keys
from reader.kosync.digest import PartialMD5
from reader.models import DocumentDigest, ReadProgress
from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic
from testsupport.responses import body_of

KOSYNC_HEADERS = {"HTTP_ACCEPT": "application/vnd.koreader.v1+json"}
PSE = "{http://vaemendis.net/opds-pse/ns}"
ATOM = {"a": "http://www.w3.org/2005/Atom"}


def koreader_partial_md5(path: Path) -> str:
    """KOReader's util.partialMD5: for i = -1, 10: seek(lshift(1024, 2*i)), read 1024, stop at EOF."""
    md5 = hashlib.md5()
    with path.open("rb") as handle:
        for i in range(-1, 11):
            # LuaJIT's bit.lshift works on 32 bits with the shift count masked to 5 bits.
            handle.seek((1024 << ((2 * i) & 31)) & 0xFFFFFFFF)
            sample = handle.read(1024)
            if not sample:
                break
            md5.update(sample)
    return md5.hexdigest()


@pytest.mark.parametrize("size", [0, 100, 1024, 1025, 4096, 5000, 70_000, 300_000])
def test_streamed_partial_md5_equals_koreaders_seek_and_read(tmp_path, size):
    data = random.Random(size).randbytes(size)
    path = tmp_path / "book.cbz"
    path.write_bytes(data)
    rng = random.Random(7)
    streamed, position = PartialMD5(), 0
    while position < size:
        step = rng.choice([1, 7, 512, 1024, 3000, 65536])
        streamed.update(data[position : position + step])
        position += step
    assert streamed.hexdigest() == koreader_partial_md5(path)


def _download(client: Client, chapter, **auth) -> bytes:
    response = client.get(f"/opds/chapters/{chapter.id}/cbz/", **auth)
    assert response.status_code == 200
    return body_of(response)


@pytest.mark.sqlite_ok
def test_a_chapter_cbz_is_byte_identical_whenever_it_is_downloaded(client, alice, db):
    src = f.source("demo")
    m = f.manga("Berserk", src=src, tags=("seinen", "dark", "action"), authors=["Kentaro Miura"])
    ch = f.chapter(m, 1, src=src, pages=3)
    auth = basic("alice", PASSWORD)
    with time_machine.travel(datetime(2025, 1, 1, 8, 0, 0, tzinfo=UTC), tick=False):
        first = _download(client, ch, **auth)
    with time_machine.travel(datetime(2026, 7, 9, 17, 33, 21, tzinfo=UTC), tick=False):
        second = _download(client, ch, **auth)
    assert first == second
    assert b"<Genre>action, dark, seinen</Genre>" in first


@pytest.fixture
def served(db, alice, tmp_path):
    """A chapter downloaded as KOReader gets it from OPDS, its file's digest, and an API key of alice's."""
    src = f.source("demo")
    m = f.manga("Berserk", src=src, tags=("dark",))
    chapter = f.chapter(m, 1, src=src, pages=4, width=300, height=400)  # ~2 KiB pages: several samples
    path = tmp_path / "Berserk - c001.cbz"
    path.write_bytes(_download(Client(), chapter, **basic("alice", PASSWORD)))
    _, key = api_keys.mint(alice, "KOReader")
    headers = {"HTTP_X_AUTH_USER": "alice", "HTTP_X_AUTH_KEY": api_keys.kosync_key(key), **KOSYNC_HEADERS}
    return {"chapter": chapter, "document": koreader_partial_md5(path), "headers": headers, "manga": m, "key": key}


def _put(client: Client, headers: dict, **body):
    return client.put("/kosync/syncs/progress", body, content_type="application/json", **headers)


def test_koreader_signs_in_with_an_api_key_and_syncs_a_downloaded_cbz_both_ways(client, alice, served):
    doc, headers, chapter = served["document"], served["headers"], served["chapter"]
    assert DocumentDigest.objects.get(digest=doc).chapter == chapter
    assert client.get("/kosync/users/auth", **headers).json() == {"authorized": "OK"}
    assert client.get(f"/kosync/syncs/progress/{doc}", **headers).json() == {}

    pushed = _put(client, headers, document=doc, progress="2", percentage=0.5, device="Kobo", device_id="K1")
    assert pushed.status_code == 200 and pushed.json()["document"] == doc
    row = ReadProgress.objects.get(user=alice, chapter=chapter)
    assert (row.last_page, row.completed) == (2, False)

    # The web reader moves on; KOReader pulls where it stopped.
    web = Client()
    web.force_login(alice)
    assert (
        web.put(f"/api/v1/progress/{chapter.id}/", {"last_page": 3}, content_type="application/json").status_code == 200
    )
    pulled = client.get(f"/kosync/syncs/progress/{doc}", **headers).json()
    assert (pulled["progress"], pulled["percentage"], pulled["document"]) == ("3", 0.75, doc)
    assert pulled["timestamp"] >= pushed.json()["timestamp"]

    _put(client, headers, document=doc, progress=4, percentage=1.0, device="Kobo", device_id="K1")
    assert ReadProgress.objects.get(user=alice, chapter=chapter).completed


def test_the_file_name_digest_names_the_chapter_too(client, alice, served):
    by_name = hashlib.md5(b"Berserk - c001.cbz").hexdigest()
    assert (
        _put(client, served["headers"], document=by_name, progress="1", percentage=0.25, device="K").status_code == 200
    )
    assert ReadProgress.objects.get(user=alice, chapter=served["chapter"]).last_page == 1


def test_progress_round_trip_web_reader_komga_kosync_opds(client, alice, served):
    chapter, doc, headers, manga = served["chapter"], served["document"], served["headers"], served["manga"]
    auth = basic("alice", PASSWORD)
    web = Client()
    web.force_login(alice)
    web.put(f"/api/v1/progress/{chapter.id}/", {"last_page": 1}, content_type="application/json")
    komga = client.get(f"/api/v1/books/{chapter.id}", **auth).json()
    assert komga["readProgress"]["page"] == 1
    patched = client.patch(
        f"/api/v1/books/{chapter.id}/read-progress", {"page": 2}, content_type="application/json", **auth
    )
    assert patched.status_code == 204
    assert client.get(f"/kosync/syncs/progress/{doc}", **headers).json()["progress"] == "2"
    _put(client, headers, document=doc, progress="3", percentage=0.75, device="Kobo", device_id="K1")
    feed = etree.fromstring(client.get(f"/opds/mangas/{manga.id}/", **auth).content)
    stream = feed.xpath("//a:link[@rel='http://vaemendis.net/opds-pse/stream']", namespaces=ATOM)[0]
    assert stream.get(PSE + "lastRead") == "3"
    assert b"Page 3 of 4" in web.get(f"/mangas/{manga.id}/").content
    _put(client, headers, document=doc, progress="4", percentage=1.0, device="Kobo", device_id="K1")
    assert b'class="state">Read<' in web.get(f"/mangas/{manga.id}/").content
    assert client.get(f"/api/v1/books/{chapter.id}", **auth).json()["readProgress"]["completed"] is True


def test_kosync_refuses_strangers_wrong_keys_and_reports_it_cannot_take(
    client, alice, served, django_user_model, settings
):
    settings.AXES_FAILURE_LIMIT = 10  # every wrong key here counts toward alice's lockout (test_lockout pins it)
    doc, headers = served["document"], served["headers"]
    assert client.get("/kosync/users/auth").status_code == 401
    wrong = {**headers, "HTTP_X_AUTH_KEY": hashlib.md5(PASSWORD.encode()).hexdigest()}
    assert client.get("/kosync/users/auth", **wrong).json() == {"code": 2001, "message": "Unauthorized"}
    bob = django_user_model.objects.create_user("bob", "bob@example.com", "bob-password")
    _, bobs_key = api_keys.mint(bob, "bob's KOReader")
    as_alice_with_bobs_key = {**headers, "HTTP_X_AUTH_KEY": api_keys.kosync_key(bobs_key)}
    for url in ("/kosync/users/auth", f"/kosync/syncs/progress/{doc}"):
        assert client.get(url, **as_alice_with_bobs_key).status_code == 401
    assert _put(client, as_alice_with_bobs_key, document=doc, progress="1", percentage=0.25).status_code == 401

    unknown = _put(client, headers, document="0" * 32, progress="1", percentage=0.1, device="K")
    assert unknown.status_code == 404 and "download this chapter's CBZ" in unknown.json()["message"]
    for bad in ({"progress": "/body/DocFragment[3]", "percentage": 0.2}, {"progress": "9", "percentage": 1.0}, {}):
        assert _put(client, headers, document=doc, device="K", **bad).status_code == 403
    assert _put(client, headers, progress="1", percentage=0.25).json()["code"] == 2004
    assert not ReadProgress.objects.exists()

    api_keys.revoke(alice, api_keys.keys_of(alice)[0].id)
    assert client.get("/kosync/users/auth", **headers).status_code == 401


def test_registration_from_koreader_is_refused_unless_the_operator_allows_it(client, db, django_user_model):
    body = {"username": "kira", "password": hashlib.md5(b"kira-secret").hexdigest()}
    refused = client.post("/kosync/users/create", body, content_type="application/json")
    assert refused.status_code == 402 and refused.json()["code"] == 2005
    assert not django_user_model.objects.filter(username="kira").exists()
    with override_settings(KOSYNC_ALLOW_REGISTRATION=True):
        made = client.post("/kosync/users/create", body, content_type="application/json")
        assert made.status_code == 201 and made.json() == {"username": "kira"}
        again = client.post("/kosync/users/create", body, content_type="application/json")
        assert again.status_code == 402 and again.json()["code"] == 2002
    kira = django_user_model.objects.get(username="kira")
    assert not kira.has_usable_password()
    auth = {"HTTP_X_AUTH_USER": "kira", "HTTP_X_AUTH_KEY": body["password"]}
    assert client.get("/kosync/users/auth", **auth).status_code == 200
    assert client.get("/opds/", **basic("kira", "kira-secret")).status_code == 401


def test_healthcheck(client, db):
    assert client.get("/kosync/healthcheck").json() == {"state": "OK"}
