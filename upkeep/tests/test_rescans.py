"""Komga and Kavita rescans after an export: settings checked key by key, requests held to each server's OpenAPI."""

from __future__ import annotations

import io
import logging
import subprocess

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from reader.tests import factories as f
from testsupport import media_servers
from upkeep.rescan_config import KAVITA, KOMGA, RescanTarget, rescan_targets
from upkeep.rescans import request_rescans

KEY = "0123456789abcdef"


def test_no_rescan_settings_is_no_target():
    assert rescan_targets({}) == ()


def test_a_complete_komga_and_kavita_are_both_targets_with_the_url_trimmed():
    targets = rescan_targets(
        {
            "KOMGA_SCAN_URL": "http://komga.lan:25600/",
            "KOMGA_SCAN_API_KEY": "k",
            "KOMGA_SCAN_LIBRARY_ID": "0B9GTMZ05M4JH",
            "KAVITA_SCAN_URL": "https://kavita.example/",
            "KAVITA_SCAN_API_KEY": "v",
            "KAVITA_SCAN_LIBRARY_ID": "3",
        }
    )
    assert targets == (
        RescanTarget(KOMGA, "http://komga.lan:25600", "k", "0B9GTMZ05M4JH"),
        RescanTarget(KAVITA, "https://kavita.example", "v", "3"),
    )
    assert "k'" not in repr(targets[0]) and "'v'" not in repr(targets[1])  # keys never printed


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"KOMGA_SCAN_URL": "http://komga.lan"}, "KOMGA_SCAN_API_KEY must be set too"),
        ({"KOMGA_SCAN_URL": "http://k", "KOMGA_SCAN_API_KEY": "k"}, "KOMGA_SCAN_LIBRARY_ID must be set too"),
        ({"KOMGA_SCAN_URL": "komga.lan", "KOMGA_SCAN_API_KEY": "k", "KOMGA_SCAN_LIBRARY_ID": "x"}, "KOMGA_SCAN_URL="),
        (
            {"KOMGA_SCAN_URL": "http://k", "KOMGA_SCAN_API_KEY": "k", "KOMGA_SCAN_LIBRARY_ID": "a/b"},
            "KOMGA_SCAN_LIBRARY_ID=",
        ),
        (
            {"KAVITA_SCAN_URL": "http://k", "KAVITA_SCAN_API_KEY": "k", "KAVITA_SCAN_LIBRARY_ID": "two"},
            "KAVITA_SCAN_LIBRARY_ID=",
        ),
        ({"KAVITA_SCAN_API_KEY": "k"}, "KAVITA_SCAN_URL must be set too"),
    ],
)
def test_a_half_or_wrong_setting_is_an_error_naming_its_key(values, named):
    with pytest.raises(ImproperlyConfigured, match=named):
        rescan_targets(values)


def test_komga_is_asked_to_scan_its_library_as_its_openapi_describes():
    with media_servers.komga(KEY, "0B9GTMZ05M4JH") as (url, komga):
        [result] = request_rescans([RescanTarget(KOMGA, url, KEY, "0B9GTMZ05M4JH")])
    assert result.ok, result.error
    assert komga.errors == []
    [call] = komga.calls
    assert (call.operation, call.path, call.status) == ("libraryScan", "/api/v1/libraries/0B9GTMZ05M4JH/scan", 202)
    assert call.headers["x-api-key"] == KEY


def test_kavita_trades_the_api_key_for_a_token_then_scans_as_its_openapi_describes():
    with media_servers.kavita(KEY, 2) as (url, kavita):
        [result] = request_rescans([RescanTarget(KAVITA, url, KEY, "2")])
    assert result.ok, result.error
    assert kavita.errors == []
    assert [(c.path, c.status) for c in kavita.calls] == [("/api/Plugin/authenticate", 200), ("/api/Library/scan", 200)]
    assert kavita.calls[1].query == {"libraryId": "2", "force": "false"}


def test_a_wrong_key_or_library_is_a_warning_naming_the_setting_and_the_next_server_is_still_asked(caplog):
    caplog.set_level(logging.WARNING, logger="upkeep.rescans")
    with media_servers.komga(KEY, "LIB") as (komga_url, komga), media_servers.kavita(KEY, 2) as (kavita_url, kavita):
        results = request_rescans(
            [RescanTarget(KOMGA, komga_url, "wrong", "LIB"), RescanTarget(KAVITA, kavita_url, KEY, "9")]
        )
    assert [r.ok for r in results] == [False, False]
    assert "KOMGA_SCAN_API_KEY" in results[0].error
    assert "KAVITA_SCAN_LIBRARY_ID='9'" in results[1].error
    assert "komga library rescan" in caplog.text and "wrong" not in caplog.text
    assert komga.errors == [] and kavita.errors == []


def test_a_server_outside_the_allowed_networks_is_refused_by_the_outbound_guard(no_outbound_allowance, caplog):
    with media_servers.komga(KEY, "LIB") as (url, komga):
        [result] = request_rescans([RescanTarget(KOMGA, url, KEY, "LIB")])
    assert not result.ok and "OUTBOUND_ALLOWED_NETWORKS" in result.error
    assert komga.calls == []


def test_an_unreachable_server_is_a_warning(caplog):
    caplog.set_level(logging.WARNING, logger="upkeep.rescans")
    [result] = request_rescans([RescanTarget(KOMGA, "http://127.0.0.1:9", KEY, "LIB")])
    assert not result.ok
    assert "komga library rescan at http://127.0.0.1:9 failed" in caplog.text


@pytest.mark.django_db
def test_export_cbz_asks_komga_and_kavita_to_rescan_and_stands_when_one_fails(settings, tmp_path, caplog):
    src = f.source("demo")
    f.chapter(f.manga("Berserk", src=src), 1, src=src, pages=1)
    with media_servers.komga(KEY, "LIB") as (komga_url, komga), media_servers.kavita(KEY, 2) as (kavita_url, kavita):
        settings.LIBRARY_RESCAN_TARGETS = (
            RescanTarget(KOMGA, komga_url, KEY, "LIB"),
            RescanTarget(KAVITA, kavita_url, "revoked", "2"),
        )
        out = io.StringIO()
        call_command("export_cbz", str(tmp_path), stdout=out)
        assert "1 written" in out.getvalue()
        assert [c.status for c in komga.calls] == [202]
        assert [c.status for c in kavita.calls] == [401], kavita.errors
        # A re-run writes nothing: nothing to rescan.
        call_command("export_cbz", str(tmp_path), stdout=io.StringIO())
        assert len(komga.calls) == 1
    assert komga.errors == [] and kavita.errors == []
    assert len(list(tmp_path.rglob("*.cbz"))) == 1


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_a_real_export_cbz_process_reads_the_settings_and_asks_komga_and_kavita(child_env, manage_cmd, tmp_path):
    src = f.source("demo")
    f.chapter(f.manga("Berserk", src=src), 1, src=src, pages=1)
    with media_servers.komga(KEY, "LIB") as (komga_url, komga), media_servers.kavita(KEY, 7) as (kavita_url, kavita):
        env = {
            **child_env,
            "KOMGA_SCAN_URL": komga_url,
            "KOMGA_SCAN_API_KEY": KEY,
            "KOMGA_SCAN_LIBRARY_ID": "LIB",
            "KAVITA_SCAN_URL": kavita_url,
            "KAVITA_SCAN_API_KEY": KEY,
            "KAVITA_SCAN_LIBRARY_ID": "7",
        }
        done = subprocess.run(
            [*manage_cmd, "export_cbz", str(tmp_path / "library")], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert "1 written" in done.stdout
        assert [c.status for c in komga.calls] == [202]
        assert [c.status for c in kavita.calls] == [200, 200]
    assert komga.errors == [] and kavita.errors == []

    half = {**child_env, "KAVITA_SCAN_URL": "http://kavita.lan:5000", "KAVITA_SCAN_LIBRARY_ID": "7"}
    refused = subprocess.run(
        [*manage_cmd, "export_cbz", str(tmp_path / "other")], env=half, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode != 0
    assert "KAVITA_SCAN_API_KEY must be set too" in refused.stderr
    assert not (tmp_path / "other").exists()


def test_a_server_that_redirects_is_a_warning_naming_the_address_to_set():
    from testsupport.http_server import QuietHandler, serving

    class Redirecting(QuietHandler):
        def do_POST(self):  # noqa: N802
            self.send_response(301)
            self.send_header("Location", "https://komga.example/api/v1/libraries/LIB/scan")
            self.send_header("Content-Length", "0")
            self.end_headers()

    with serving(Redirecting) as url:
        [result] = request_rescans([RescanTarget(KOMGA, url, KEY, "LIB")])
    assert "HTTP 301" in result.error and "set KOMGA_SCAN_URL to the address it points to" in result.error
