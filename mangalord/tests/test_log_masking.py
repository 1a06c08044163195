"""An API key in a URL never reaches a log line in clear: Django's logs, daphne's access log, our own loggers."""

from __future__ import annotations

import io
import logging
import os
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from django.test import Client

from accounts import api_keys
from mangalord import log_masking
from mangalord.log_masking import MaskApiKeys, mask

# Every test but the one starting daphne runs on the embedded SQLite backend too (a child process sees the test
# database on PostgreSQL only).
sqlite_ok = pytest.mark.sqlite_ok

SECRET = "mlk_" + "S3cr3tK3y" * 5  # shaped like a minted key: the prefix and 45 URL-safe characters


@sqlite_ok
@pytest.mark.parametrize(
    ("line", "logged"),
    [
        (f"GET /key/{SECRET}/opds/", "GET /key/mlk_S3cr…/opds/"),
        (f"Not Found: /key/{SECRET}/opds/mangas/4/cover/", "Not Found: /key/mlk_S3cr…/opds/mangas/4/cover/"),
        ("/key/typed-by-hand-not-a-key/opds/", "/key/type…/opds/"),  # a mistyped key is still somebody's secret
        (f"/key/{SECRET}", "/key/mlk_S3cr…"),
        (f"GET /opds/?apikey={SECRET}&page=2", "GET /opds/?apikey=mlk_S3cr…&page=2"),
        (f"X-API-Key {SECRET} refused", "X-API-Key mlk_S3cr… refused"),
        ("GET /opds/mangas/4/ 200", "GET /opds/mangas/4/ 200"),
        ("/key/mlk_S3cr…/opds/", "/key/mlk_S3cr…/opds/"),  # masking twice changes nothing
    ],
)
def test_mask_cuts_every_key_to_its_first_characters(line, logged):
    assert mask(line) == logged
    assert mask(mask(line)) == logged


@sqlite_ok
def test_the_masks_prefix_is_the_keys():
    assert log_masking.KEY_PREFIX == api_keys.KEY_PREFIX


@sqlite_ok
def test_the_filter_masks_arguments_and_tracebacks():
    try:
        raise ValueError(f"bad key {SECRET}")
    except ValueError:
        import sys

        exc_info = sys.exc_info()
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "request %s failed", (f"/key/{SECRET}/",), exc_info)
    assert MaskApiKeys().filter(record) is True
    assert record.getMessage() == "request /key/mlk_S3cr…/ failed"
    assert SECRET not in record.exc_text and "bad key mlk_S3cr…" in record.exc_text


def _product_handlers() -> Iterator[tuple[str, logging.Handler]]:
    """The handlers of the loggers the LOGGING setting configures (a library's own, like RapidOCR's, are not ours)."""
    from django.conf import settings

    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in settings.LOGGING.get("loggers", {}))]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if type(handler).__module__.startswith("_pytest") or isinstance(handler, logging.NullHandler):
                continue  # pytest's capture, not the product's; a library's NullHandler writes nothing
            yield logger.name, handler


@sqlite_ok
def test_every_handler_the_logging_setting_installs_masks_keys():
    handlers = list(_product_handlers())
    assert {name for name, _ in handlers} >= {"root", "django.server", "django.channels.server"}
    for name, handler in handlers:
        assert any(isinstance(f, MaskApiKeys) for f in handler.filters), (name, handler)
    assert not logging.getLogger("django").handlers  # Django's own console and mail handlers are cleared


@pytest.fixture
def console() -> Iterator[io.StringIO]:
    """What the product's console handler writes, for the length of a test."""
    (handler,) = [h for name, h in _product_handlers() if name == "root"]
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        yield stream
    finally:
        handler.setStream(previous)


@sqlite_ok
@pytest.mark.django_db
def test_a_real_requests_log_lines_carry_the_key_masked(console):
    assert Client().get(f"/key/{SECRET}/opds/").status_code == 401  # unknown: "Unauthorized: /key/…"
    assert Client().get(f"/key/{SECRET}/admin/").status_code == 404  # "Not Found: /key/…"
    logging.getLogger("crawler.anything").warning("an app asked %s", f"/key/{SECRET}/opds/")
    written = console.getvalue()
    assert SECRET not in written
    assert "Unauthorized: /key/mlk_S3cr…/opds/" in written
    assert "Not Found: /key/mlk_S3cr…/admin/" in written
    assert "an app asked /key/mlk_S3cr…/opds/" in written


@sqlite_ok
def test_daphnes_access_log_writer_masks_the_request_line():
    from daphne.access import AccessLogGenerator

    log_masking.mask_daphne_access_log()
    log_masking.mask_daphne_access_log()  # idempotent: wrapped once
    stream = io.StringIO()
    AccessLogGenerator(stream)(
        "http",
        "complete",
        {"client": "1.2.3.4", "method": "GET", "path": f"/key/{SECRET}/opds/", "status": 200, "size": 5},
    )
    assert SECRET not in stream.getvalue() and '"GET /key/mlk_S3cr…/opds/" 200 5' in stream.getvalue()


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_daphne_as_deployed_logs_a_key_in_the_url_masked(child_env):
    from testsupport.live_server import start_daphne

    server = start_daphne(child_env, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        for path in (f"/key/{SECRET}/opds/", f"/key/{SECRET}/no-such-page/"):
            with pytest.raises(urllib.error.HTTPError):
                urllib.request.urlopen(server.url + path, timeout=10)
    finally:
        server.stop()
    log = server.log()
    assert SECRET not in log
    assert '"GET /key/mlk_S3cr…/opds/" 401' in log, log  # daphne's access log
    assert "Not Found: /key/mlk_S3cr…/no-such-page/" in log  # Django's request log
