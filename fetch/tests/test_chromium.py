"""Which Chromium is launched: the decision over made-up file systems, then a real launch of Debian's."""

from __future__ import annotations

import os

import pytest

from fetch import chromium
from fetch.chromium import ChromiumMissing, choose

BUNDLED = "/home/u/.cache/ms-playwright/chromium-1/chrome-linux/chrome"


def _choose(files: set[str], path: dict[str, str] | None = None, configured: str | None = None, **kwargs) -> str | None:
    return choose(configured, BUNDLED, exists=files.__contains__, which=(path or {}).get, **kwargs)


def test_chromium_path_wins_over_everything():
    assert _choose({BUNDLED, "/usr/bin/chromium"}, configured="/opt/chrome/chrome") == "/opt/chrome/chrome"


def test_playwrights_bundled_browser_is_used_when_it_is_there():
    assert _choose({BUNDLED, "/usr/bin/chromium"}) is None


def test_without_a_bundled_browser_debians_chromium_then_ubuntus():
    assert _choose({"/usr/bin/chromium", "/usr/bin/chromium-browser"}) == "/usr/bin/chromium"
    assert _choose({"/usr/bin/chromium-browser"}) == "/usr/bin/chromium-browser"


def test_either_name_is_found_on_the_path_too():
    assert _choose(set(), {"chromium": "/snap/bin/chromium"}) == "/snap/bin/chromium"
    assert _choose(set(), {"chromium-browser": "/usr/local/bin/chromium-browser"}) == "/usr/local/bin/chromium-browser"


def test_none_found_names_the_package_to_install_never_playwright_install():
    with pytest.raises(ChromiumMissing) as debian:
        _choose(set(), distribution="debian")
    message = str(debian.value)
    assert "apt-get install chromium`" in message and "CHROMIUM_PATH" in message
    assert "/usr/bin/chromium" in message and "playwright install" not in message
    with pytest.raises(ChromiumMissing, match="apt-get install chromium-browser` \\(Ubuntu\\)") as ubuntu:
        _choose(set(), distribution="ubuntu")
    assert "playwright install" not in str(ubuntu.value)


def test_the_distribution_is_read_from_os_release(tmp_path):
    release = tmp_path / "os-release"
    release.write_text('PRETTY_NAME="Ubuntu 24.04 LTS"\nID=ubuntu\nID_LIKE=debian\n')
    assert chromium.distribution_id(str(release)) == "ubuntu"
    release.write_text('ID="debian"\n')
    assert chromium.distribution_id(str(release)) == "debian"
    assert chromium.distribution_id(str(tmp_path / "absent")) == ""


@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="Debian's chromium package is not installed")
def test_without_chromium_path_or_a_bundled_browser_debians_chromium_is_launched(monkeypatch, settings):
    from fetch.browser import SharedBrowser
    from fetch.tab import PageLimits

    # Whether or not `playwright install` ran on this machine, the bundled browser is missing here.
    monkeypatch.setattr(chromium, "choose", lambda configured, bundled, **kw: choose(configured, "/absent", **kw))
    browser = SharedBrowser(
        None,
        settings.CHROMIUM_ARGS,
        restart_threshold=3,
        navigation_timeout_secs=10,
        limits=lambda: PageLimits(1 << 20, 10),
    )
    try:
        launched = browser.run(lambda chromium_browser: chromium_browser.version)
    finally:
        browser.close()
    assert launched.split(".")[0].isdigit()
    assert browser.launched_executable == "/usr/bin/chromium"
