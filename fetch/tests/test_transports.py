"""The two transports on their own: each connection checked at connect time, pinned, and the proxy rule."""

from __future__ import annotations

import httpx
import pytest

from fetch import outbound
from fetch.addresses import parse_networks
from fetch.curl_transfer import Transfer
from fetch.pinned import GuardedTransport


@pytest.fixture
def client():
    with httpx.Client(transport=GuardedTransport()) as client:
        yield client


def test_the_page_transport_refuses_a_loopback_address_at_connect_time_naming_the_rule(canary, client):
    with pytest.raises(outbound.AddressRefused, match="127.0.0.1 is a loopback address; OUTBOUND_ALLOWED_NETWORKS"):
        client.get(canary.url + "/")
    assert canary.hits == []


def test_the_image_transport_refuses_the_address_libcurl_is_about_to_connect_to(canary):
    with pytest.raises(outbound.AddressRefused, match="localhost resolves to .*, a loopback address"):
        Transfer(f"http://localhost:{canary.port}/x.jpg", {}, timeout_secs=2)
    assert canary.hits == []


def test_a_name_with_a_refused_and_an_allowed_address_connects_only_to_the_allowed_one(canary, client, settings):
    # `localhost` is 127.0.0.1 and ::1; only ::1 is allowed: the connection goes there, never to 127.0.0.1.
    settings.OUTBOUND_ALLOWED_NETWORKS = parse_networks("::1/128")
    assert client.get(f"http://localhost:{canary.port}/").status_code == 200
    assert len(canary.hits) == 1 and canary.hits[0].startswith("('::1'")


def test_the_allowance_lets_the_named_network_through(canary, client, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = parse_networks("127.0.0.1/32")
    assert client.get(canary.url + "/").status_code == 200
    transfer = Transfer(canary.url + "/x.jpg", {}, timeout_secs=2)
    assert transfer.status_code == 200
    transfer.close()
    assert len(canary.hits) == 2


def test_through_a_proxy_the_target_is_checked_before_the_proxy_is_asked(canary, client, monkeypatch):
    # The canary stands in for the proxy: the operator's proxy may be local; targets may not.
    monkeypatch.setenv("http_proxy", canary.url)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    for attempt in (lambda: client.get("http://10.0.0.1/"), lambda: Transfer("http://10.0.0.1/", {}, timeout_secs=2)):
        with pytest.raises(outbound.AddressRefused, match="10.0.0.1 is a private address"):
            attempt()
    assert canary.hits == []
    # A target the proxy alone can resolve goes to the proxy (both transports choose it the same way).
    assert client.get("http://site.invalid/page").status_code == 200
    transfer = Transfer("http://site.invalid/x.jpg", {}, timeout_secs=2)
    assert transfer.status_code == 200
    transfer.close()
    assert canary.requests == ["GET http://site.invalid/page", "GET http://site.invalid/x.jpg"]
