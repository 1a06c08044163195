"""What reaches a dead letter or a page about a URL: its scheme and masked form, never its secret."""

from __future__ import annotations

import pytest

from notify.sending import redact
from notify.targets import masked, scheme_of

pytestmark = pytest.mark.sqlite_ok  # pure: no database


def test_redact_blanks_every_piece_of_the_url_from_apprise_text():
    url = "gotifys://push.example.org/AbCdEf123456"
    said = "Failed to send Gotify notification to push.example.org/AbCdEf123456: error=401"
    assert redact(said, url) == "Failed to send Gotify notification to ****/****: error=401"


def test_masked_hides_passwords_and_tokens():
    assert masked("json://user:pa55word@hooks.example.org/in") == "json://user:****@hooks.example.org/in"
    shown = masked("tgram://123456789:ABCdefGHIjklMNO/12345")
    assert "ABCdefGHIjklMNO" not in shown and shown.startswith("tgram://")
    assert masked("nosuch://secret-token") == "nosuch://…"


def test_scheme_of():
    assert scheme_of(" NTFYS://ntfy.sh/x") == "ntfys"
    assert scheme_of("no scheme") == ""
