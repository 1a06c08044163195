"""A Suwayomi-Server source, from `add_source` to every reader, in real processes.

The stand-in Suwayomi (testsupport/suwayomi: the recorded GraphQL schema
over a small catalog, UI_LOGIN auth on) is listed and one of its sources
added with `add_source --suwayomi`, walked by `metadata_pass` and downloaded
by `crawl_worker --drain`, each a real `manage.py` process. The stored
chapters keep Mihon's numbering (-1, fractional, volumes); a second pass
after the source publishes a manga stops early at the first unchanged one;
the web reader, OPDS, the CBZ and the Komga API serve the server's page bytes.
Every document any process sent is valid against the recorded schema.
"""

from __future__ import annotations

import io
import re
import subprocess
import time
import zipfile
from decimal import Decimal

import pytest
from django.test import Client

from catalog.models import Chapter, Manga, Page, Source
from conftest import REPO_ROOT
from crawler import state_store
from reader.tests.conftest import assert_valid_opds, basic
from reader.tests.komga_schema import assert_komga_valid
from testsupport.suwayomi.catalog import HARBOR, StandinChapter, StandinManga
from testsupport.suwayomi.server import SERVER_VERSION, suwayomi_standin

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]
PASSWORD = "reader-password"
ENV = {"ANALYSIS_ENABLED": "false", "JOBS_POLL_SECS": "0.2", "JOBS_WORKERS": "2"}
LOCAL_PACE = ("--set", "rate_limit=500", "--set", "burst=100", "--set", "max_concurrency=8")
LOGIN = ("--set", "suwayomi_auth=login", "--set", "suwayomi_username=reader", "--set", "suwayomi_password=secret")
SOURCE_ID = "harbor-scans-en"


def manage(manage_cmd: list[str], env: dict[str, str], *args: str) -> str:
    done = subprocess.run([*manage_cmd, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{args[0]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def body(answer) -> bytes:
    """A response's bytes, streamed (CBZ, page images) or not."""
    return b"".join(answer.streaming_content) if answer.streaming else answer.content


def test_a_suwayomi_source_added_by_an_operator_crawls_end_to_end_and_reads_in_every_reader(
    child_env, manage_cmd, django_user_model, opds_schema
):
    env = {**child_env, **ENV}
    with suwayomi_standin(auth="login") as standin:
        # --- the operator lists the server's sources, then adds one by name and language ---------
        listed = manage(manage_cmd, env, "add_source", standin.base_url, "--suwayomi", *LOGIN)
        assert f"3 source(s) on {standin.base_url} (Suwayomi-Server {SERVER_VERSION}):" in listed
        assert re.search(rf"{HARBOR.id}\s+en\s+Harbor Scans \(EN\)", listed)
        assert re.search(r"de\s+Harbor Scans \(DE\)", listed)
        assert re.search(r"en\s+NSFW\s+Night Shelf \(EN\)\s+\(no latest listing", listed)
        added = manage(
            manage_cmd, env, "add_source", standin.base_url, "--suwayomi", "Harbor Scans",
            "--set", "suwayomi_lang=en", *LOGIN, *LOCAL_PACE,
        )  # fmt: skip
        assert f"added source '{SOURCE_ID}'" in added
        assert '"suwayomi_password": "(hidden)"' in added and "secret" not in added
        assert "list page 1: 3 manga(s), more pages" in added
        settings = Source.objects.get(id=SOURCE_ID).settings
        assert (settings["suwayomi_source"], settings["language"]) == (HARBOR.id, "en")  # by id; its language

        # --- the crawl: the real metadata pass and crawl worker -----------------------------------
        started = time.monotonic()
        manage(manage_cmd, env, "metadata_pass")
        manage(manage_cmd, env, "crawl_worker", "--drain", "--no-schedule")
        elapsed = time.monotonic() - started
        catalog = standin.listing(HARBOR.id)
        assert sorted(Manga.objects.values_list("title", flat=True)) == sorted(m.title for m in catalog)
        done = Chapter.objects.filter(sync_state="done")
        assert done.count() == Chapter.objects.count() == sum(len(m.chapters) for m in catalog)
        crimson = Manga.objects.get(title="Crimson Tide")
        rows = Chapter.objects.filter(manga=crimson).order_by("source_chapter_key")
        assert [(c.source_chapter_key, c.kind, c.number) for c in rows] == [
            (str(c.id), c.expected_kind, Decimal(c.expected_number)) for c in sorted(
                standin.manga(1).chapters, key=lambda c: str(c.id))
        ]  # fmt: skip
        assert state_store.last_run_clean(SOURCE_ID)
        figures = {
            "mangas": Manga.objects.count(),
            "chapters": done.count(),
            "pages": Page.objects.filter(chapter__in=done).count(),
            "graphql_requests": len(standin.operations),
            "seconds": round(elapsed, 1),
        }

        # --- the next pass: a new manga on top, and the walk stops at the first unchanged one ------
        new = StandinManga(100, HARBOR.id, "Fresh Tide", "New Author", ("Drama",), "ONGOING",
                           (StandinChapter(10001, 100, "Chapter 1", 1.0, 1, 1_790_000_000_000, "Tide Team"),))  # fmt: skip
        standin.publish(new)
        before = len(standin.operations)
        manage(manage_cmd, env, "metadata_pass")
        manage(manage_cmd, env, "crawl_worker", "--drain", "--no-schedule")
        second = standin.operations[before:]
        assert second.count("Manga") == 2, second  # the new manga, then Crimson Tide unchanged: stop
        assert second.count("SourceManga") == 1
        assert Chapter.objects.get(manga__title="Fresh Tide").sync_state == "done"

        # --- every reader serves the server's bytes ---------------------------------------------------
        reader = django_user_model.objects.create_user("reader", "reader@example.com", PASSWORD)
        web, auth = Client(), basic(reader.username, PASSWORD)
        web.force_login(reader)
        page = web.get(f"/mangas/{crimson.id}/").content.decode()
        shown = re.findall(r'<li id="chapter-[^"]+"[^>]*>\s*<a href="[^"]+">([^<]+)</a>', page)
        assert shown == ["Chapter 1", "Chapter 2: The Gate", "Chapter 2.5", "Notice: Hiatus"]
        first = Chapter.objects.get(manga=crimson, source_chapter_key="101")
        served = standin.manga(1).chapters[-1].pages
        assert web.get(f"/read/{first.id}/").status_code == 200

        feed = Client().get(f"/opds/mangas/{crimson.id}/", **auth)
        doc = assert_valid_opds(opds_schema, feed.content)
        assert [e.findtext("{http://www.w3.org/2005/Atom}title") for e in doc.iter("{*}entry")] == shown
        assert {e.findtext("{http://purl.org/dc/terms/}language") for e in doc.iter("{*}entry")} == {"en"}

        cbz = zipfile.ZipFile(io.BytesIO(body(Client().get(f"/opds/chapters/{first.id}/cbz/", **auth))))
        assert [cbz.read(n) for n in cbz.namelist() if n != "ComicInfo.xml"] == list(served)

        books = Client().get(f"/api/v1/series/{crimson.id}/books?unpaged=true&media_status=READY", **auth).json()
        assert_komga_valid("/api/v1/series/{seriesId}/books", "get", books)
        assert [b["metadata"]["title"] for b in books["content"]] == shown
        book = next(b for b in books["content"] if b["id"] == str(first.id))
        for number, image in enumerate(served, start=1):
            answer = Client().get(f"/api/v1/books/{book['id']}/pages/{number}", **auth)
            assert (answer.status_code, body(answer)) == (200, image)

        assert standin.invalid == []
        print(f"suwayomi journey figures: {figures}")
