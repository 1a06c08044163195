"""Bad reader input is a 4xx everywhere (web, OPDS, API, admin), never a 500 from the database."""

from __future__ import annotations

import pytest

from reader.tests import factories as f
from reader.tests.conftest import PASSWORD, basic

pytestmark = pytest.mark.django_db
HUGE = "99999999999999999999"


@pytest.fixture
def chapter(db):
    src = f.source("demo")
    return f.chapter(f.manga("Berserk", src=src), 1, src=src, pages=2)


def test_a_huge_pse_page_number_is_a_404(client, alice, chapter):
    response = client.get(f"/opds/chapters/{chapter.id}/pages/{HUGE}/", **basic("alice", PASSWORD))
    assert response.status_code == 404


@pytest.mark.parametrize("path", ["/opds/search/?q=%00", "/opds/search/?q=a%00b", "/opds/all/?after=%00"])
def test_a_nul_in_an_opds_query_is_a_400(client, alice, path):
    response = client.get(path, **basic("alice", PASSWORD))
    assert response.status_code == 400
    assert "NUL" in response.content.decode()


@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_USER_AGENT": "KOReader\x00"},  # the lockout stores a failed sign-in's user agent
        {"HTTP_X_AUTH_USER": "alice\x00", "HTTP_X_AUTH_KEY": "0" * 32},
    ],
)
def test_a_nul_in_a_header_is_a_400_before_any_view(client, headers):
    response = client.get("/kosync/users/auth", **headers)
    assert response.status_code == 400
    assert "NUL" in response.content.decode()


def test_a_nul_in_the_web_readers_search_is_a_400(client, alice):
    client.force_login(alice)
    assert client.get("/?q=%00").status_code == 400


def test_a_nul_in_the_api_search_is_a_400(alice_client):
    assert alice_client.get("/api/v1/mangas/?q=%00").status_code == 400


def test_a_nul_in_the_admin_search_is_a_400(admin_client):
    assert admin_client.get("/admin/catalog/manga/?q=%00").status_code == 400


def test_a_huge_backlog_page_is_a_400_naming_the_parameter(staff_client):
    response = staff_client.get(f"/api/v1/admin/crawler/backlog/?page={HUGE}")
    assert response.status_code == 400
    assert "page" in response.json()


def test_a_huge_page_of_a_capped_search_is_a_404(alice_client, settings, chapter):
    f.manga("Berserk Deluxe", src=chapter.source)
    settings.CATALOG_SEARCH_COUNT_CAP = 1  # two matches: past the cap, pages are found by looking
    assert alice_client.get(f"/api/v1/mangas/?q=ber&page={HUGE}").status_code == 404


@pytest.mark.parametrize("path", [f"/?page={HUGE}", f"/opds/all/?page={HUGE}", f"/opds/latest/?page={HUGE}"])
def test_huge_page_numbers_of_reader_lists_are_a_400(client, alice, path):
    assert client.get(path, **basic("alice", PASSWORD)).status_code in (400, 302)
    client.force_login(alice)
    assert client.get(path).status_code == 400


def test_a_huge_width_or_tag_id_is_a_4xx(client, alice, chapter):
    client.force_login(alice)
    page = chapter.pages.first()
    assert client.get(f"/read/pages/{page.id}/image/?w={HUGE}").status_code == 400
    assert client.get(f"/opds/tags/{HUGE}/").status_code == 404


def test_an_oversized_json_body_is_a_413_naming_the_limit(alice_client, settings, chapter):
    settings.REQUEST_JSON_MAX_BYTES = 100
    response = alice_client.put(f"/api/v1/progress/{chapter.id}/", {"last_page": 1, "pad": "x" * 200}, format="json")
    assert response.status_code == 413
    assert "larger than 100 bytes" in response.json()["detail"]


def test_a_deeply_nested_json_body_is_a_400_naming_the_depth(alice_client, chapter):
    body = b'{"last_page": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    response = alice_client.put(f"/api/v1/progress/{chapter.id}/", body, content_type="application/json")
    assert response.status_code == 400
    assert "deeper than 32 levels" in response.json()["detail"]
