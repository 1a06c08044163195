"""`manage.py demo` crawls its own site on 127.0.0.1, which the outbound rule refuses unless allowed."""

from __future__ import annotations

import ipaddress

from demo.preparation import allow_demo_site
from fetch import outbound


def test_the_demo_allows_its_own_loopback_site_and_keeps_the_operators_allowance(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = (ipaddress.ip_network("10.0.0.0/8"),)
    allow_demo_site()
    outbound.check_address("127.0.0.1", ipaddress.ip_address("127.0.0.1"))  # allowed now: no AddressRefused
    assert settings.OUTBOUND_ALLOWED_NETWORKS == (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("127.0.0.1/32"),
    )
    allow_demo_site()  # twice: named once
    assert len(settings.OUTBOUND_ALLOWED_NETWORKS) == 2
