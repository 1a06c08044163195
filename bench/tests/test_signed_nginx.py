"""nginx checks a web reader page's signed URL itself: the location docs/serving.md documents, run for real.

Needs nginx (Debian's nginx-light has the secure_link module); skipped without it. The URLs are minted by the
product's own signing (catalog/serving/signing.py, nginx form), and the block nginx runs is the one the
documentation shows.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import serving_nginx
from crawling.serve import Nginx, free_ports

from catalog.serving.signing import PAGE_PREFIX, expiry, mac, page_message, page_path

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx-light)"),
]
KEY = "test-signing-key-" + "x" * 24
DOCS = Path(__file__).resolve().parents[2] / "docs" / "serving.md"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
NAME = "pages/0f1e2d3c-aaaa-bbbb-cccc-123456789abc/4d2a9c.png"
OTHER = "pages/0f1e2d3c-aaaa-bbbb-cccc-123456789abc/ffff00.png"


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(base URL, media root) of nginx with the signed location and nothing else to answer."""
    work = tmp_path_factory.mktemp("signed-nginx")
    media = work / "media"
    for name in (NAME, OTHER):
        (media / name).parent.mkdir(parents=True, exist_ok=True)
        (media / name).write_bytes(PNG + name.encode())
    (work / "secret.png").write_bytes(b"outside MEDIA_ROOT")
    (port,) = free_ports(1)
    prefix = work / "nginx"
    prefix.mkdir()
    config = (
        f"{serving_nginx.nginx_main(prefix)}http {{\n{serving_nginx.nginx_http_common(prefix)}    access_log off;\n"
        f"    server {{\n        listen 127.0.0.1:{port};\n"
        f"{serving_nginx.signed_location(str(media), KEY, indent='        ')}"
        "        location / { return 404; }\n    }\n}\n"
    )
    with Nginx(prefix, [port], config):
        yield f"http://127.0.0.1:{port}", media


def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 (our own nginx)
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, {k.lower(): v for k, v in refused.headers.items()}, refused.read()


def signed(name: str = NAME, *, now: float | None = None, user: int = 7) -> str:
    path = page_path(KEY, name=name, etag=hashlib.sha256(name.encode()).hexdigest(), content_type="image/png",
                     user=user, now=time.time() if now is None else now, lifetime=3600, nginx=True)  # fmt: skip
    assert path is not None
    return path


def test_nginx_serves_the_page_a_signed_url_names_with_the_web_process_headers(front):
    base, media = front
    status, headers, body = fetch(base + signed())
    assert status == 200 and body == (media / NAME).read_bytes()
    assert headers["content-type"] == "image/png" and headers["cache-control"] == "private, max-age=86400"
    assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "same-origin" and headers["cross-origin-opener-policy"] == "same-origin"
    status, headers, body = fetch(base + signed(), Range="bytes=0-7")
    assert status == 206 and body == PNG[:8] and headers["content-range"] == f"bytes 0-7/{len(PNG) + len(NAME)}"


def test_nginx_refuses_an_expired_url(front):
    base, _ = front
    assert fetch(base + signed(now=time.time() - 2 * 3600))[0] == 403


def test_nginx_refuses_a_url_for_one_page_used_for_another_or_another_user(front):
    base, _ = front
    path = signed()
    assert fetch(base + path.replace(NAME, OTHER))[0] == 403
    assert fetch(base + path.replace("/7/", "/8/"))[0] == 403


def test_nginx_refuses_a_forged_mac_and_the_hmac_form(front):
    base, _ = front
    path = signed()
    mac_part = path[len(PAGE_PREFIX) :].split("/", 1)[0]
    assert fetch(base + path.replace(mac_part, "A" * 22))[0] == 403
    hmac_form = page_path(KEY, name=NAME, etag=hashlib.sha256(NAME.encode()).hexdigest(), content_type="image/png",
                          user=7, now=time.time(), lifetime=3600)  # fmt: skip
    assert fetch(base + hmac_form)[0] == 404, "not nginx's form: not its location"


def test_nginx_opens_nothing_outside_media_root_even_under_a_valid_mac(front):
    base, _ = front
    until = expiry(time.time(), 3600)
    etag = "0" * 64
    for name in ("../secret.png", "pages/../../secret.png"):
        forged = f"{PAGE_PREFIX}{mac(KEY, page_message(until, 7, etag, name), nginx=True)}/{until}/7/{etag}/{name}"
        status, _, body = fetch(base + forged)
        assert status in (403, 404) and b"outside" not in body


def test_the_documented_location_is_the_one_tested():
    documented = serving_nginx.signed_location("/srv/mangalord/data/media/", "<SERVE_SIGNING_KEY>")
    assert documented in DOCS.read_text()


def test_this_nginx_has_the_secure_link_module():
    out = subprocess.run(["nginx", "-V"], capture_output=True, text=True, check=True)
    assert "http_secure_link_module" in out.stderr + out.stdout
