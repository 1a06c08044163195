"""The outbound rule's decisions, pure: which addresses are refused, every spelling of them, the allowance."""

from __future__ import annotations

import ipaddress

import pytest

from fetch.addresses import ip_literal, is_localhost_name, kind_of, parse_networks, refusal

# (address, the kind named in the refusal; None: public, allowed)
KINDS = [
    ("127.0.0.1", "a loopback address"),
    ("127.0.0.2", "a loopback address"),
    ("::1", "a loopback address"),
    ("0.0.0.0", "an unspecified address (it reaches this machine)"),
    ("::", "an unspecified address (it reaches this machine)"),
    ("10.0.0.1", "a private address"),
    ("172.16.0.1", "a private address"),
    ("192.168.1.1", "a private address"),
    ("fc00::1", "a private address"),
    ("169.254.169.254", "a link-local address (cloud metadata services live there)"),
    ("fe80::1", "a link-local address (cloud metadata services live there)"),
    ("100.64.0.1", "a shared (carrier-grade NAT) address"),
    ("224.0.0.1", "a multicast address"),
    ("ff02::1", "a multicast address"),
    ("240.0.0.1", "a private address"),  # Python files 240/4 under private too: refused either way
    ("192.0.2.1", "a private address"),  # documentation range
    ("::ffff:127.0.0.1", "a loopback address (127.0.0.1, inside ::ffff:7f00:1)"),
    ("::127.0.0.1", "a loopback address (127.0.0.1, inside ::7f00:1)"),
    ("64:ff9b::7f00:1", "a loopback address (127.0.0.1, inside 64:ff9b::7f00:1)"),
    ("2002:7f00:1::", "a loopback address (127.0.0.1, inside 2002:7f00:1::)"),
    ("::ffff:10.1.2.3", "a private address (10.1.2.3, inside ::ffff:a01:203)"),
    ("8.8.8.8", None),
    ("2606:4700::1111", None),
    ("::ffff:8.8.8.8", None),
]


@pytest.mark.parametrize(("text", "kind"), KINDS)
def test_each_address_is_refused_with_its_kind_or_allowed_when_public(text, kind):
    assert kind_of(ipaddress.ip_address(text)) == kind


# Every spelling the system resolver (inet_aton) reads as an IPv4 address.
SPELLINGS = [
    ("127.0.0.1", "127.0.0.1"),
    ("2130706433", "127.0.0.1"),
    ("0x7f000001", "127.0.0.1"),
    ("0x7f.0.0.1", "127.0.0.1"),
    ("0177.0.0.1", "127.0.0.1"),
    ("017700000001", "127.0.0.1"),
    ("127.1", "127.0.0.1"),
    ("127.0.1", "127.0.0.1"),
    ("0", "0.0.0.0"),
    ("[::1]", "::1"),
    ("[0:0:0:0:0:0:0:1]", "::1"),
    ("[::ffff:7f00:1]", "::ffff:7f00:1"),
    ("169.254.169.254.", "169.254.169.254"),
    ("example.com", None),
    ("cdn-1.example", None),
    ("0x", "0.0.0.0"),
    ("256.1.1.1", None),
    ("08.1.1.1", None),
]


@pytest.mark.parametrize(("host", "address"), SPELLINGS)
def test_ip_literal_reads_every_spelling_the_resolver_reads(host, address):
    found = ip_literal(host)
    assert (str(found) if found is not None else None) == address


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "localhost.", "app.localhost", "x.LocalHost."])
def test_localhost_names_are_loopback_whatever_the_resolver_says(host):
    assert is_localhost_name(host)


@pytest.mark.parametrize("host", ["localhost.example.com", "notlocalhost", "example.com"])
def test_names_that_only_look_like_localhost_are_names(host):
    assert not is_localhost_name(host)


def test_the_allowance_admits_exactly_the_networks_it_names():
    allowed = parse_networks("127.0.0.1/32, ::1/128")
    assert refusal(ipaddress.ip_address("127.0.0.1"), allowed) is None
    assert refusal(ipaddress.ip_address("::ffff:127.0.0.1"), allowed) is None  # the same host, mapped
    assert refusal(ipaddress.ip_address("::1"), allowed) is None
    assert refusal(ipaddress.ip_address("127.0.0.2"), allowed) == "a loopback address"
    assert refusal(ipaddress.ip_address("10.0.0.1"), allowed) == "a private address"
    assert refusal(ipaddress.ip_address("8.8.8.8"), ()) is None


def test_an_allowance_entry_that_is_no_network_is_named():
    with pytest.raises(ValueError, match="'10.0.0.1/8' is not a network"):
        parse_networks("127.0.0.1/32,10.0.0.1/8")
    with pytest.raises(ValueError, match="'zz' is not a network"):
        parse_networks("zz")
    assert parse_networks("") == ()
