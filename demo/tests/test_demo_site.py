"""The demo site over real HTTP: pages, images, catalog mutation, every fault switch, the control routes."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
from decimal import Decimal

import httpx
import pytest
from PIL import Image

from demo.site import DemoFaults, control

pytestmark = pytest.mark.sqlite_ok


def _get(site, path: str, **kwargs) -> httpx.Response:
    return httpx.get(site.url(path), timeout=10, **kwargs)


def _list_keys(html: str) -> list[str]:
    return re.findall(r'href="/manga/([\w-]+)"', html)


def _image_paths(site, manga) -> list[str]:
    chapter = manga.chapters[0]
    html = _get(site, f"/manga/{manga.key}/chapter/{chapter.key}").text
    return [src.removeprefix(site.base_url) for src in re.findall(r'<img class="page" src="([^"]+)"', html)]


def test_list_pages_are_newest_first_ten_per_page_with_a_next_link(demo_site):
    first = _get(demo_site, "/mangas?page=1").text
    second = _get(demo_site, "/mangas?page=2").text
    keys = [m.key for m in demo_site.catalog]
    assert _list_keys(first) == keys[:10]
    assert _list_keys(second) == keys[10:12]
    assert 'class="next"' in first and 'class="next"' not in second
    assert _list_keys(_get(demo_site, "/mangas?page=3").text) == []


def test_detail_page_lists_metadata_cover_and_chapters_including_half_chapters(demo_site_factory):
    site = demo_site_factory(mangas=8, chapters=(3, 3))
    manga = site.manga("manga-0004")  # every fourth manga carries a 2.5 special
    assert Decimal("2.5") in [c.number for c in manga.chapters]
    html = _get(site, "/manga/manga-0004").text
    assert f'<h1 class="manga-title">{manga.title}</h1>' in html
    assert 'class="cover"' in html and 'class="status"' in html and 'class="tag"' in html
    assert "Chapter 2.5:" in html
    assert len(re.findall(r'class="chapter-link"', html)) == len(manga.chapters)


def test_chapter_page_mixes_absolute_and_relative_image_urls_and_every_image_decodes(demo_site):
    manga = demo_site.catalog[0]
    srcs = _image_paths(demo_site, manga)
    assert len(srcs) == manga.chapters[0].pages
    html = _get(demo_site, f"/manga/{manga.key}/chapter/{manga.chapters[0].key}").text
    assert f'src="{demo_site.base_url}/img/' in html and 'src="/img/' in html
    formats = set()
    for path in srcs:
        response = _get(demo_site, path)
        assert response.status_code == 200
        image = Image.open(io.BytesIO(response.content))
        assert image.size == (600, 850)
        formats.add(image.format)
    cover = Image.open(io.BytesIO(_get(demo_site, f"/img/covers/{manga.key}.{manga.cover_format}").content))
    assert cover.size == (400, 600)
    assert len(formats) >= 2


def test_catalog_and_images_are_deterministic_from_the_seed(demo_site_factory):
    one, two = demo_site_factory(seed=7), demo_site_factory(seed=7)
    assert [(m.key, m.title) for m in one.catalog] == [(m.key, m.title) for m in two.catalog]
    path = _image_paths(one, one.catalog[0])[0]
    assert _get(one, path).content == _get(two, path).content
    assert [m.title for m in demo_site_factory(seed=8).catalog] != [m.title for m in one.catalog]


def test_catalog_mutations_bump_the_manga_to_newest(demo_site):
    oldest = demo_site.catalog[-1].key
    new_key = demo_site.add_manga("Brand New Story")
    assert demo_site.catalog[0].key == new_key and demo_site.catalog[0].title == "Brand New Story"
    chapter_key = demo_site.add_chapter(oldest)
    assert demo_site.catalog[0].key == oldest
    assert demo_site.manga(oldest).chapter(chapter_key) is not None
    demo_site.remove_chapter(oldest, chapter_key)
    assert demo_site.manga(oldest).chapter(chapter_key) is None
    middle = demo_site.catalog[5].key
    demo_site.update_manga(middle, title="Renamed", status="Completed")
    assert demo_site.catalog[0].key == middle
    assert "Renamed" in _get(demo_site, f"/manga/{middle}").text
    with pytest.raises(ValueError, match="cannot update"):
        demo_site.update_manga(middle, chapters=[])


def test_list_drift_prepends_a_manga_right_after_page_one_is_served(demo_site):
    demo_site.faults.list_drift = True
    before = [m.key for m in demo_site.catalog]
    first = _list_keys(_get(demo_site, "/mangas?page=1").text)
    assert first == before[:10]
    [added] = demo_site.drift_added
    assert demo_site.catalog[0].key == added
    # The last ref of page 1 slid onto page 2; the new manga sits where the walker already was.
    assert _list_keys(_get(demo_site, "/mangas?page=2").text)[0] == before[9]


def test_detail_404_fault_answers_not_found_for_that_manga_only(demo_site):
    victim, other = demo_site.catalog[0].key, demo_site.catalog[1].key
    demo_site.faults.detail_404 = {victim}
    assert _get(demo_site, f"/manga/{victim}").status_code == 404
    assert _get(demo_site, f"/manga/{other}").status_code == 200


def test_slow_fault_delays_past_a_short_client_timeout(demo_site):
    demo_site.faults.slow_secs = 1.0
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(demo_site.url("/mangas?page=1"), timeout=0.2)


def test_broken_image_keeps_the_magic_but_does_not_decode(demo_site):
    demo_site.faults.broken_image = True
    path = _image_paths(demo_site, demo_site.catalog[0])[0]
    response = _get(demo_site, path)
    assert response.status_code == 200 and response.headers["content-type"].startswith("image/")
    with pytest.raises(Exception):  # noqa: B017 - Pillow raises several types for garbage
        Image.open(io.BytesIO(response.content)).load()


def test_html_as_image_answers_200_with_an_html_page(demo_site):
    demo_site.faults.html_as_image = True
    response = _get(demo_site, _image_paths(demo_site, demo_site.catalog[0])[0])
    assert response.status_code == 200
    assert response.content.lstrip().lower().startswith(b"<!doctype html")


def test_cut_image_mid_body_closes_the_connection_short_of_content_length(demo_site):
    demo_site.faults.cut_image_mid_body = True
    path = _image_paths(demo_site, demo_site.catalog[0])[0]
    with pytest.raises(httpx.RemoteProtocolError):
        _get(demo_site, path)


def test_login_wall_answers_every_page_with_the_login_form_and_images_with_403(demo_site):
    path = _image_paths(demo_site, demo_site.catalog[0])[0]
    demo_site.faults.login_wall = True
    for page in ("/mangas?page=1", f"/manga/{demo_site.catalog[0].key}"):
        assert 'id="login-form"' in _get(demo_site, page).text
    assert _get(demo_site, path).status_code == 403


def test_required_session_admits_only_the_matching_phpsessid(demo_site):
    path = _image_paths(demo_site, demo_site.catalog[0])[0]
    demo_site.require_session = "s3cret"
    assert 'id="login-form"' in _get(demo_site, "/mangas?page=1").text
    assert 'id="login-form"' in _get(demo_site, "/mangas?page=1", cookies={"PHPSESSID": "wrong"}).text
    assert 'class="manga-link"' in _get(demo_site, "/mangas?page=1", cookies={"PHPSESSID": "s3cret"}).text
    assert _get(demo_site, path).status_code == 403
    assert _get(demo_site, path, cookies={"PHPSESSID": "s3cret"}).status_code == 200
    assert demo_site.requests[-1].cookies == {"PHPSESSID": "s3cret"}


def test_markup_drift_strips_href_or_title_from_some_anchors(demo_site):
    demo_site.faults.markup_drift = True
    html = _get(demo_site, "/mangas?page=1").text
    anchors = re.findall(r"<a class=\"manga-link\"[^>]*>", html)
    assert len(anchors) == 10
    assert sum("href=" not in a for a in anchors) == 3
    assert sum('title=""' in a for a in anchors) == 2


def test_outage_answers_503_everywhere_but_the_control_routes(demo_site):
    demo_site.faults.outage = True
    assert _get(demo_site, "/mangas?page=1").status_code == 503
    assert _get(demo_site, _image_paths_unchecked(demo_site)).status_code == 503
    assert _get(demo_site, "/__control/faults").json()["outage"] is True


def _image_paths_unchecked(site) -> str:
    manga = site.catalog[0]
    chapter = manga.chapters[0]
    return f"/img/pages/{chapter.key}/1.{chapter.page_format(1)}"


def test_offsite_and_redirect_faults_point_images_at_another_origin(demo_site):
    manga = demo_site.catalog[0]
    demo_site.faults.offsite_images = "http://127.0.0.2:9"
    assert all(src.startswith("http://127.0.0.2:9/img/") for src in _image_paths(demo_site, manga))
    demo_site.reset_faults()
    demo_site.faults.redirect_images_to = "http://127.0.0.2:9"
    response = _get(demo_site, _image_paths_unchecked(demo_site))
    assert response.status_code == 302 and response.headers["location"].startswith("http://127.0.0.2:9/img/")


def test_control_routes_steer_faults_and_catalog_from_another_process(demo_site):
    faults = control.set_faults(demo_site.base_url, outage=True, detail_404=["manga-0001"])
    assert faults["outage"] is True and demo_site.faults.detail_404 == {"manga-0001"}
    key = control.mutate_catalog(demo_site.base_url, "add_manga", title="Remote Title")
    assert demo_site.catalog[0].key == key
    control.reset_faults(demo_site.base_url)
    assert demo_site.faults.outage is False and demo_site.faults.detail_404 == set()


def test_control_route_rejects_a_bad_fault_and_changes_nothing(demo_site):
    with pytest.raises(ValueError, match="unknown demo fault 'outtage'"):
        control.set_faults(demo_site.base_url, login_wall=True, outtage=True)
    with pytest.raises(ValueError, match="slow_secs"):
        control.set_faults(demo_site.base_url, login_wall=True, slow_secs=-1)
    assert demo_site.faults.login_wall is False


def test_reset_faults_turns_every_switch_off(demo_site):
    demo_site.faults.update({"outage": True, "login_wall": True, "require_session": "x", "slow_secs": 2})
    demo_site.reset_faults()
    assert _get(demo_site, "/mangas?page=1").status_code == 200
    assert demo_site.faults.as_dict() == DemoFaults().as_dict()


@pytest.mark.process
def test_demo_site_command_serves_in_another_process_steered_over_http(manage_cmd):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([*manage_cmd, "demo_site", "--mangas", "4"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        base_url = proc.stdout.readline().strip().removeprefix("demo site: ")
        assert base_url.startswith("http://127.0.0.1:")
        assert len(_list_keys(httpx.get(f"{base_url}/mangas?page=1", timeout=10).text)) == 4
        control.set_faults(base_url, outage=True)
        assert httpx.get(f"{base_url}/mangas?page=1", timeout=10).status_code == 503
        control.reset_faults(base_url)
        assert httpx.get(f"{base_url}/mangas?page=1", timeout=10).status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
