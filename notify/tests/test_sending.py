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


@pytest.mark.django_db
def test_a_refused_destination_is_dead_at_once_and_an_unresolved_host_is_retried(alice, no_outbound_allowance):
    from jobs.errors import PermanentError
    from notify.models import Delivery, NotificationTarget
    from notify.sending import DeliveryFailed, deliver

    refused = NotificationTarget.objects.create(user=alice, url="json://u:pw@127.0.0.1:5432/x", scheme="json")
    unresolved = NotificationTarget.objects.create(user=alice, url="json://u:pw@no-such-host.invalid/x", scheme="json")
    with pytest.raises(PermanentError, match=r"json:// target .*OUTBOUND_ALLOWED_NETWORKS"):
        deliver(Delivery(target=refused, kind=Delivery.Kind.TEST, title="t", body="b"))
    with pytest.raises(DeliveryFailed, match="does not resolve"):
        deliver(Delivery(target=unresolved, kind=Delivery.Kind.TEST, title="t", body="b"))
