"""PHPSESSID refresh: allow-listed, stored server-side, never logged, echoed or audited in clear."""

from __future__ import annotations

import hashlib
import logging

import pytest
from rest_framework.test import APIClient

from console.control.actions import is_valid_phpsessid
from crawler import state_store
from crawler.models import AuditEvent
from testsupport import api_factories as f

URL = "/api/v1/admin/crawler/session/"
SECRET = "s3cr3t-SESSION,value-0042"


@pytest.fixture
def client(staff) -> APIClient:
    client = APIClient()
    client.force_login(staff)  # a real session: the whole request path, as a browser would take it
    return client


def post(client: APIClient, body: object):
    return f.post_json(client, URL, body)


def _everything_logged(caplog) -> str:
    """Messages, arguments and every attribute of every captured record, as one string."""
    return "\n".join(f"{r.getMessage()} {r.args!r} {r.__dict__!r}" for r in caplog.records)


@pytest.mark.sqlite_ok
def test_refresh_stores_value_clears_expired_flag_and_audits_only_the_fingerprint(client, staff, db):
    f.source("target")
    state_store.set_session_expired("target", True)
    response = post(client, {"phpsessid": SECRET})
    assert response.status_code == 200
    assert response.json() == {"source": "target", "stored": True}
    assert SECRET not in response.content.decode()
    assert state_store.session_cookie("target") == SECRET
    assert state_store.session_expired("target") is False
    row = AuditEvent.objects.get(action="refresh_session")
    assert (row.actor, row.scope, row.target_id) == (staff, "source", "target")
    assert row.detail == {"sha256": hashlib.sha256(SECRET.encode()).hexdigest()}
    assert SECRET not in repr(AuditEvent.objects.values().get(pk=row.pk))


@pytest.mark.sqlite_ok
def test_session_value_never_reaches_the_logs(client, caplog, db):
    f.source("target")
    caplog.set_level(logging.DEBUG)
    for name in ("django", "django.request", "django.server", "crawler", "rest_framework"):
        caplog.set_level(logging.DEBUG, logger=name)
    assert post(client, {"phpsessid": SECRET}).status_code == 200
    rejected = SECRET + ";Path=/"
    assert post(client, {"phpsessid": rejected}).status_code == 400
    assert caplog.records, "the refresh should leave at least a (value-free) log line"
    logged = _everything_logged(caplog)
    assert SECRET not in logged
    assert rejected not in logged


@pytest.mark.sqlite_ok
def test_named_source_among_several(client, db):
    f.source("demo")
    f.source("target")
    assert post(client, {"phpsessid": SECRET, "source": "target"}).status_code == 200
    assert state_store.session_cookie("target") == SECRET
    assert state_store.session_cookie("demo") is None


@pytest.mark.sqlite_ok
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"phpsessid": ""},
        {"phpsessid": "a" * 257},
        {"phpsessid": "abc;def"},
        {"phpsessid": "abc def"},
        {"phpsessid": "abc\n"},
        {"phpsessid": " abc"},
        {"phpsessid": "abc=1"},
        {"phpsessid": "ünïcode"},
        {"phpsessid": 12345},
        {"phpsessid": None},
        {"phpsessid": ["abc"]},
        {"phpsessid": "abc", "source": "nope"},
    ],
    ids=lambda b: repr(b)[:40],
)
def test_bad_session_input_is_400_without_echo_or_change(client, body, db):
    f.source("target")
    response = post(client, body)
    assert response.status_code == 400
    value = body.get("phpsessid")
    if isinstance(value, str) and len(value) > 2:
        assert value not in response.content.decode()
    assert state_store.session_cookie("target") is None
    assert not AuditEvent.objects.exists()


@pytest.mark.sqlite_ok
def test_several_enabled_sources_need_the_source_named(client, db):
    f.source("demo")
    f.source("target")
    response = post(client, {"phpsessid": SECRET})
    assert response.status_code == 400
    assert "source" in response.json()["detail"]
    assert state_store.session_cookie("demo") is None and state_store.session_cookie("target") is None


@pytest.mark.sqlite_ok
def test_no_source_at_all_is_409(client, db):
    response = post(client, {"phpsessid": SECRET})
    assert response.status_code == 409
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("a", True),
        ("A-z,0-9", True),
        ("x" * 256, True),
        ("x" * 257, False),
        ("", False),
        ("abc\n", False),
        ("a;b", False),
        ("a b", False),
        ("a=b", False),
        (None, False),
        (123, False),
    ],
)
def test_phpsessid_allow_list(value, ok):
    assert is_valid_phpsessid(value) is ok
