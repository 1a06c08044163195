"""MangaDex by its address alone, crawled in real processes from the stand-in and read in every reader.

`add_source https://mangadex.org` (its settings pointing the kind at the
stand-in's API, cover host and report endpoint on 127.0.0.1, never the live
site), `metadata_pass` and `crawl_worker --drain` run as `manage.py`
processes against the MangaDex stand-in (testsupport/mangadex), whose every
exchange is checked against MangaDex's OpenAPI description when the test
ends. A 429 in the middle of the downloads defers the job it hit (no dead
job). Then what was stored is compared with the stand-in's catalog, and the
web reader, OPDS (against the OPDS 1.2 grammar) and the Komga API (against
Komga's description, page bytes as the at-home node served them) read it.
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone

from catalog.models import Chapter, Manga, Page, Source
from conftest import REPO_ROOT
from jobs.models import Job
from reader.tests.conftest import assert_valid_opds, basic
from reader.tests.komga_schema import assert_komga_valid
from testsupport.mangadex.catalog import expected

pytestmark = [pytest.mark.process, pytest.mark.django_db(transaction=True)]
PASSWORD = "reader-password"
ENV = {"ANALYSIS_ENABLED": "false", "JOBS_POLL_SECS": "0.2", "JOBS_WORKERS": "2"}
ATOM = "{http://www.w3.org/2005/Atom}"


def manage(manage_cmd: list[str], env: dict[str, str], *args: str) -> str:
    done = subprocess.run([*manage_cmd, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{args[0]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def drain(manage_cmd: list[str], env: dict[str, str]) -> int:
    """Run the workers until no job is left to run; a job deferred by a 429 runs once its cooldown ends."""
    runs = 0
    deadline = time.monotonic() + 120
    while True:
        manage(manage_cmd, env, "crawl_worker", "--drain", "--no-schedule")
        runs += 1
        waiting = Job.objects.filter(state="pending").order_by("scheduled_at").first()
        if waiting is None or time.monotonic() > deadline:
            return runs
        time.sleep(max((waiting.scheduled_at - timezone.now()).total_seconds(), 0.2))


def test_mangadex_by_its_address_is_crawled_from_the_standin_and_read_in_every_reader(
    mangadex_standin, child_env, manage_cmd, django_user_model, opds_schema
):
    env = {**child_env, **ENV}
    sets = [arg for key, value in mangadex_standin.settings.items() for arg in ("--set", f"{key}={json.dumps(value)}")]
    added = manage(manage_cmd, env, "add_source", "https://mangadex.org", *sets)
    assert "kind mangadex" in added and "added source 'mangadex'" in added
    row = Source.objects.get()
    assert (row.id, row.kind, row.base_url) == ("mangadex", "mangadex", "https://mangadex.org")

    walked = manage(manage_cmd, env, "metadata_pass")
    assert "chapters_skipped_external=1 chapters_skipped_unavailable=1" in walked, walked
    mangadex_standin.throttle_next, mangadex_standin.throttle_secs = 1, 2  # the rate limit, hit mid-download
    runs = drain(manage_cmd, env)

    # --- what was stored, against what the stand-in serves in English ---------------------------
    want = expected(("en",))
    assert sorted(Manga.objects.values_list("title", flat=True)) == sorted(want)
    assert not Job.objects.filter(state="dead").exists(), list(Job.objects.filter(state="dead").values("last_error"))
    done = Chapter.objects.filter(sync_state="done")
    figures = {
        "mangas": Manga.objects.count(),
        "chapters": done.count(),
        "pages": Page.objects.filter(chapter__in=done).count(),
        "worker_runs": runs,
    }
    wanted = {
        "mangas": len(want),
        "chapters": sum(len(w["chapters"]) for w in want.values()),
        "pages": sum(w["pages"] for w in want.values()),
    }
    assert {k: figures[k] for k in wanted} == wanted
    for title, spec in want.items():
        manga = Manga.objects.get(title=title)
        assert manga.cover_state == "stored"
        assert sorted(Chapter.objects.filter(manga=manga).values_list("source_chapter_key", flat=True)) == sorted(
            c.id for c in spec["chapters"]
        )
    night = Manga.objects.get(title="The Night Gate")
    assert (night.alt_titles, night.authors, night.status) == ([], ["Aki Mori"], "ongoing")
    throttled = [e for e in mangadex_standin.of("api") if e.status == 429]
    assert len(throttled) == 1  # answered once, waited out, not retried into the limit
    reports = [json.loads(e.body) for e in mangadex_standin.of("report")]
    images = [e for e in mangadex_standin.of("at_home") if e.status == 200]
    assert len(reports) >= len(images) >= figures["pages"] and all(r["success"] for r in reports)
    assert {e.headers.get("user-agent") for e in mangadex_standin.exchanges} == {django_settings.MANGADEX_USER_AGENT}

    # --- the web reader, OPDS and the Komga API --------------------------------------------------
    reader = django_user_model.objects.create_user("reader", "reader@example.com", PASSWORD)
    web, auth = Client(), basic(reader.username, PASSWORD)
    web.force_login(reader)
    library = web.get("/").content.decode()
    assert all(title in library for title in want)
    page = web.get(f"/mangas/{night.id}/").content.decode()
    labels = re.findall(r'<li id="chapter-[^"]+"[^>]*>\s*<a href="[^"]+">([^<]+)</a>', page)
    assert [label.split(": ", 1)[-1] for label in labels] == ["Dusk", "The Gate"]
    gate = Chapter.objects.get(manga=night, title="The Gate")
    reading = web.get(f"/read/{gate.id}/").content.decode()
    shown = re.findall(r"/read/pages/([0-9a-f-]+)/image/", reading)
    assert len(dict.fromkeys(shown)) == 3
    for page_id in dict.fromkeys(shown):
        answer = web.get(f"/read/pages/{page_id}/image/")
        assert answer.status_code == 200 and answer["Content-Type"].startswith("image/")

    served = {c.id: c for w in want.values() for c in w["chapters"]}
    books_read = pages_read = 0
    for title, spec in want.items():
        manga = Manga.objects.get(title=title)
        feed = Client().get(f"/opds/mangas/{manga.id}/", **auth)
        doc = assert_valid_opds(opds_schema, feed.content)
        assert len(list(doc.iter(f"{ATOM}entry"))) == len(spec["chapters"]), title
        books = Client().get(f"/api/v1/series/{manga.id}/books?unpaged=true&media_status=READY", **auth).json()
        assert_komga_valid("/api/v1/series/{seriesId}/books", "get", books)
        assert len(books["content"]) == len(spec["chapters"]), title
        for book in books["content"]:
            chapter = served[Chapter.objects.get(id=book["id"]).source_chapter_key]
            for number in range(1, chapter.pages + 1):
                image = Client().get(f"/api/v1/books/{book['id']}/pages/{number}", **auth)
                assert image.status_code == 200
                body = b"".join(image.streaming_content) if image.streaming else image.content
                assert body == chapter.image(chapter.files(False)[number - 1], False)  # the node's bytes
                pages_read += 1
            books_read += 1
    figures.update(komga_books=books_read, komga_pages=pages_read)
    assert (books_read, pages_read) == (wanted["chapters"], wanted["pages"])
    print(f"mangadex journey figures: {figures}, expected {wanted}")
