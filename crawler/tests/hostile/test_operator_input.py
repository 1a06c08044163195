"""What an operator types: URLs that do not parse answer 400, image hosts inside are refused, nothing is echoed."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from fetch.addresses import parse_networks
from sources.config import HtmlSourceConfig
from sources.errors import SourceConfigError
from sources.hosts import parse_host_rule
from testsupport.http_server import QuietHandler, serving

pytestmark = pytest.mark.django_db

ADD = "/admin/crawler/sources/add/"
SECRET = "INTERNAL-SECRET-93ab"


@pytest.fixture
def operator_client(operator) -> Client:
    client = Client(HTTP_ORIGIN="http://testserver")
    client.force_login(operator)
    return client


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://[::1", "is not a URL"),
        ("[zz]", "is not a URL"),
        ("https://[zz]/", "is not a URL"),
        ("http://example.com:99999/", "has a bad port"),
        ("ftp://example.com/", "is not an http(s) site address"),
        ("http://0177.0.0.1/", "0177.0.0.1 resolves to 127.0.0.1, a loopback address; OUTBOUND_ALLOWED_NETWORKS"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
    ],
)
def test_look_at_the_site_answers_400_naming_what_is_wrong_never_500(operator_client, no_outbound_allowance, url, says):
    response = operator_client.post(ADD, {"step": "detect", "url": url})
    assert response.status_code == 400
    assert says in response.content.decode().replace("&#x27;", "'")


@pytest.mark.parametrize(
    "entry",
    ["127.0.0.1:6379", "169.254.169.254", "[::1]:8080", "0x7f000001", "10.0.0.5", "localhost:6379", "[::ffff:7f00:1]"],
)
def test_an_image_host_inside_is_refused_when_the_settings_are_validated(no_outbound_allowance, entry):
    with pytest.raises(SourceConfigError, match=re.escape(f"image_hosts entry {entry!r} is refused: ") + ".*OUTBOUND_"):
        parse_host_rule(entry)
    with pytest.raises(SourceConfigError, match="is refused"):
        HtmlSourceConfig.from_settings({"preset": "madara", "image_hosts": [entry]}, source_id="s")


def test_the_settings_page_refuses_an_inside_image_host_with_a_400_and_keeps_the_settings(
    operator_client, no_outbound_allowance
):
    from catalog.models import Source

    Source.objects.create(id="site", name="Site", kind=Source.Kind.HTML, base_url="https://example.com",
                          settings={"preset": "madara"})  # fmt: skip
    settings_json = '{"preset": "madara", "image_hosts": ["169.254.169.254"]}'
    response = operator_client.post("/admin/crawler/sources/site/settings/", {"settings": settings_json})
    assert response.status_code == 400
    assert "image_hosts entry &#x27;169.254.169.254&#x27; is refused" in response.content.decode()
    assert Source.objects.get(id="site").settings == {"preset": "madara"}


def test_an_image_host_the_allowance_names_is_accepted(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = parse_networks("10.0.0.0/8")
    assert parse_host_rule("10.0.0.5:8080").host == "10.0.0.5"
    assert parse_host_rule("cdn.example.com").host == "cdn.example.com"  # names are checked when connecting


class _NotHtml(QuietHandler):
    """An internal service that answers JSON and plain text, with a <title> inside to tempt an echo."""

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
        kind = "application/json" if "json" in self.path else "text/plain"
        body = f'<title>{SECRET}</title><div class="page-item-detail"><a href="/m/">{SECRET}</a></div>'.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_look_at_the_site_shows_nothing_of_an_answer_that_is_not_html(operator_client):
    with serving(_NotHtml) as site:
        response = operator_client.post(ADD, {"step": "detect", "url": site + "/"})
    page = response.content.decode()
    assert response.status_code == 400 and SECRET not in page
    assert "answered text/plain, not an HTML page" in page


def test_the_dry_run_shows_nothing_of_a_list_page_that_is_not_html(operator_client):
    with serving(_NotHtml) as site:
        form = {"step": "confirm", "action": "preview", "url": site, "base_url": site, "name": "Inside",
                "source_id": "", "preset": "madara", "extra": '{"list_url": "json?page={page}"}'}  # fmt: skip
        response = operator_client.post(ADD, form)
    page = response.content.decode()
    assert response.status_code == 400 and SECRET not in page
    assert "answered application/json, not HTML" in page
