"""`manage.py demo --no-serve` end to end: a fresh library from nothing, then a quick unchanged re-run.

On PostgreSQL the demo uses this test's database; on the embedded SQLite
default (CI's SQLite run) it gets a fresh data directory of its own, exactly
what a newcomer's first `python manage.py demo` sees.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess

import pytest
from django.db import connection

from catalog.models import Manga, Page
from conftest import REPO_ROOT
from demo.tests.conftest import demo_rows

pytestmark = [pytest.mark.process, pytest.mark.sqlite_ok, pytest.mark.django_db(transaction=True)]


def run_demo(env: dict[str, str], manage_cmd: list[str]) -> str:
    result = subprocess.run(
        [*manage_cmd, "demo", "--no-serve", "--no-analysis", "--mangas", "3"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def library_counts(env: dict[str, str]) -> tuple[int, int, int]:
    """(mangas, chapters done, pages) as the demo's own database holds them."""
    return demo_rows(
        env,
        "SELECT COUNT(*) FROM catalog_manga",
        "SELECT COUNT(*) FROM catalog_chapter WHERE sync_state = 'done'",
        "SELECT COUNT(*) FROM catalog_page",
    )


def test_demo_crawls_a_fresh_library_then_reruns_unchanged(demo_env, manage_cmd):
    first = run_demo(demo_env, manage_cmd)

    stored = re.search(r"(\d+) mangas \((\d+) covers\), (\d+) chapters \((\d+) downloaded\), (\d+) pages", first)
    assert stored, first
    mangas, covers, chapters, downloaded, pages = map(int, stored.groups())
    assert (mangas, covers) == (3, 3)
    assert chapters == downloaded > 0
    assert pages >= chapters
    assert library_counts(demo_env) == (3, chapters, pages)
    assert "level=" not in first  # the log went to its file, not over the bars
    assert re.search(r"user 'demo-admin', password \S{12,}", first)  # generated and printed once
    for url in ("/admin/crawler/", "/api/v1/mangas/", "/api/docs/"):
        assert f"http://127.0.0.1:8000{url}" in first
    assert re.search(r"Reader +http://127\.0\.0\.1:8000/ +user 'demo-admin', password \S{12,}", first)
    assert re.search(r"OPDS +http://127\.0\.0\.1:8000/opds/ +user 'demo-admin', password \S{12,}", first)

    second = run_demo(demo_env, manage_cmd)
    assert "caught up" in second
    assert "user 'demo-admin' (existing" in second  # no second admin, no password shown again
    assert f"{mangas} mangas ({covers} covers), {chapters} chapters ({downloaded} downloaded), {pages} pages" in second
    assert library_counts(demo_env) == (3, chapters, pages)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the API check reads the demo's rows from this database")
def test_demo_on_s3_stores_every_cover_and_page_in_the_bucket_and_the_api_serves_them(
    demo_env, manage_cmd, s3_storage, alice_client, anon_client, settings
):
    out = run_demo({**demo_env, **s3_storage.env()}, manage_cmd)

    stored = re.search(r"(\d+) mangas \((\d+) covers\), (\d+) chapters \((\d+) downloaded\), (\d+) pages", out)
    assert stored, out
    mangas, covers, chapters, downloaded, pages = map(int, stored.groups())
    keys = s3_storage.keys()
    assert len([k for k in keys if k.startswith("media/pages/")]) == pages > 0
    assert len([k for k in keys if k.startswith("media/covers/")]) == covers == mangas == 3
    assert len(keys) == pages + covers
    assert s3_storage.pending_uploads() == []
    assert not any(files for _, _, files in os.walk(settings.MEDIA_ROOT))  # nothing on local disk
    print(f"\ns3 demo figures: mangas={mangas} covers={covers} chapters={chapters} pages={pages} objects={len(keys)}")

    for page in Page.objects.all():
        response = alice_client.get(f"/api/v1/pages/{page.id}/image/")
        assert response.status_code == 200
        # A page up to one block is answered whole, a larger one streamed: the bytes are the same either way.
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert int(response["Content-Length"]) == len(body)
        assert hashlib.sha256(body).hexdigest() == page.sha256
    for manga in Manga.objects.all():
        cover = alice_client.get(f"/api/v1/mangas/{manga.id}/cover/")
        assert cover.status_code == 200 and cover["Content-Type"].startswith("image/")
