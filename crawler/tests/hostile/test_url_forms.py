"""Every spelling of "this machine" and "inside", through every product path, against a loopback canary.

Each test walks the whole table and collects what went wrong, so one run
shows every form that got through (and the canary's hits), not just the
first. A path "holds" for a form when it refuses with a message naming the
rule (OUTBOUND_ALLOWED_NETWORKS) and the canary saw no connection.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from catalog.models import Source
from sources.base import SourceChapter, SourceMangaRef
from sources.config import HtmlSourceConfig
from sources.errors import FetchRefused
from sources.html import HtmlSource
from testsupport.canary import SECRET
from testsupport.http_server import QuietHandler, serving

from .conftest import ALL_FORMS, url_for

pytestmark = pytest.mark.django_db

RULE = "OUTBOUND_ALLOWED_NETWORKS"
ADD = "/admin/crawler/sources/add/"


def _host_name_forms() -> list[str]:
    """This machine's own name when it resolves to an address the rule refuses (loopback or private, as in
    containers): a plain name, not a literal, so only the check at connect time can catch it."""
    name = socket.gethostname()
    try:
        socket.getaddrinfo(name, 80)
    except OSError:
        return []
    return [name]


FORMS = ALL_FORMS + _host_name_forms()


def _holds(text: str) -> bool:
    return RULE in text and SECRET not in text


def test_add_source_probe_refuses_every_form(canary):
    failures = []
    for form in FORMS:
        url = url_for(form, canary.port)
        try:
            call_command("add_source", url, stdout=StringIO())
        except CommandError as exc:
            if not _holds(str(exc)):
                failures.append((form, str(exc)))
        else:
            failures.append((form, "added"))
    assert failures == [] and canary.hits == []
    assert not Source.objects.exists()


@pytest.fixture
def operator_client(operator) -> Client:
    client = Client(HTTP_ORIGIN="http://testserver")
    client.force_login(operator)
    return client


def test_the_sources_page_look_at_the_site_refuses_every_form_with_a_400(canary, operator_client):
    failures = []
    for form in FORMS:
        response = operator_client.post(ADD, {"step": "detect", "url": url_for(form, canary.port)})
        page = response.content.decode()
        if response.status_code != 400 or not _holds(page):
            failures.append((form, response.status_code, page.split('id="cs-error"')[-1][:200]))
    assert failures == [] and canary.hits == []


def test_the_sources_page_dry_run_refuses_every_form_and_echoes_nothing(canary, operator_client):
    failures = []
    for form in FORMS:
        url = url_for(form, canary.port)
        form_data = {"step": "confirm", "action": "preview", "url": url, "base_url": url.rstrip("/"),
                     "name": "Inside", "source_id": "", "preset": "madara", "extra": ""}  # fmt: skip
        response = operator_client.post(ADD, form_data)
        page = response.content.decode()
        # A base URL the model's own validation already rejects is refused too, before any fetch.
        refused = _holds(page) or "Enter a valid URL" in page
        if response.status_code != 400 or not refused or SECRET in page:
            failures.append((form, response.status_code, page.split('id="cs-error"')[-1][:200]))
    assert failures == [] and canary.hits == []
    assert not Source.objects.exists()


def _source(base_url: str) -> HtmlSource:
    return HtmlSource("inside", base_url, HtmlSourceConfig.from_settings({"preset": "madara"}, source_id="inside"))


def _crawl_requests(source: HtmlSource, base: str) -> dict[str, Callable[[], object]]:
    """Each request a crawl of `base` makes, by what it fetches (pages over httpx, images over libcurl)."""
    return {
        "list page": lambda: source.list_page(1),
        "detail page": lambda: source.manga_detail(SourceMangaRef("manga/x", base + "/manga/x/", "X")),
        "chapter page": lambda: source.chapter_pages(SourceChapter("c1", Decimal(1), url=base + "/manga/x/ch-1/")),
        "cover": lambda: source.open_image(base + "/cover.jpg"),
        "chapter image": lambda: source.open_image(base + "/uploads/1.jpg"),
    }


def test_a_crawls_list_detail_chapter_cover_and_image_requests_refuse_every_form(canary):
    failures = []
    for form in FORMS:
        base = url_for(form, canary.port, "")
        source = _source(base)
        for path, attempt in _crawl_requests(source, base).items():
            try:
                attempt()
            except FetchRefused as exc:
                if not _holds(str(exc)):
                    failures.append((form, path, str(exc)))
            else:
                failures.append((form, path, "fetched"))
        source.close()
    assert failures == [] and canary.hits == []


class _Redirector(QuietHandler):
    """An allowed site whose every page and image redirects to the canary (the Location set per test)."""

    location = ""

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
        self.send_response(302)
        self.send_header("Location", self.location)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_a_redirect_from_an_allowed_site_to_the_canary_is_refused_on_every_path(canary, settings):
    from fetch.addresses import parse_networks

    failures = []
    # The allowed site is on 127.0.0.1 (allowed for this test); each hop to the canary is refused (by name:
    # another origin; and by address where the form is not 127.0.0.1).
    settings.OUTBOUND_ALLOWED_NETWORKS = parse_networks("127.0.0.1/32")
    with serving(_Redirector) as site:
        for form in FORMS:
            _Redirector.location = url_for(form, canary.port)
            source = _source(site)
            for path, attempt in _crawl_requests(source, site).items():
                try:
                    attempt()
                except FetchRefused as exc:
                    if "refusing" not in str(exc):
                        failures.append((form, path, str(exc)))
                else:
                    failures.append((form, path, "fetched"))
            source.close()
    assert failures == [] and canary.hits == []
