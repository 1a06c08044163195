"""Notification URLs through the REST API and the account page: your own only, checked by Apprise, shown masked."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from jobs.models import Job
from notify import targets
from notify.handlers import handle_notify_send
from notify.models import Delivery, NotificationTarget
from notify.payloads import NotifySend
from notify.tests.receiver import json_receiver

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

SECRET = "hunter2-secret"
LIST = "/api/v1/notifications/"


@pytest.fixture
def bob_client(django_user_model) -> APIClient:
    client = APIClient()
    client.force_authenticate(django_user_model.objects.create_user("bob", "bob@example.com", "bob-password"))
    return client


def test_adding_a_url_stores_it_and_shows_it_masked(alice_client, alice):
    response = alice_client.post(
        LIST, {"url": f"json://alice:{SECRET}@127.0.0.1:9/hook", "label": "home"}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["scheme"] == "json"
    assert body["masked_url"] == "json://alice:****@127.0.0.1:9/hook"
    assert (body["digests"], body["health_alerts"]) == (True, False)
    listed = alice_client.get(LIST)
    assert SECRET not in listed.content.decode()
    assert [t["id"] for t in listed.json()] == [body["id"]]
    assert NotificationTarget.objects.get(user=alice).url == f"json://alice:{SECRET}@127.0.0.1:9/hook"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("", "may not be blank"),
        ("   ", "enter a notification URL"),
        ("https://example.com/hook", "Apprise cannot use this https:// URL"),
        ("nosuchservice://token", "Apprise cannot use this nosuchservice:// URL"),
        ("not a url", "starts with its service's scheme"),
    ],
)
def test_a_url_apprise_cannot_use_is_a_400_naming_what_to_fix_and_stores_nothing(alice_client, url, says):
    response = alice_client.post(LIST, {"url": url}, format="json")
    assert response.status_code == 400
    assert says in str(response.json())
    assert not NotificationTarget.objects.exists()


def test_a_self_hosted_url_into_the_private_network_is_refused(alice_client, no_outbound_allowance):
    response = alice_client.post(LIST, {"url": f"json://u:{SECRET}@127.0.0.1:5432/x"}, format="json")
    assert response.status_code == 400
    message = str(response.json())
    assert "OUTBOUND_ALLOWED_NETWORKS" in message and SECRET not in message
    assert not NotificationTarget.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        "matrix://user:pw@10.0.0.7/#room",
        "mmost://192.168.1.8/abcdefghij",
        "hassio://169.254.169.254/abc",
        "kodi://127.0.0.1",
        "mailto://user:pw@example.com?smtp=10.0.0.5",
    ],
)
def test_any_service_that_connects_to_the_urls_host_is_held_to_the_outbound_rule(
    alice_client, no_outbound_allowance, url
):
    """Not only the self-hosted webhook schemes: Matrix, Mattermost, Home Assistant, Kodi, an SMTP server."""
    response = alice_client.post(LIST, {"url": url}, format="json")
    assert response.status_code == 400 and "OUTBOUND_ALLOWED_NETWORKS" in str(response.json())
    assert not NotificationTarget.objects.exists()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("discord://123456/abcdef", []),  # posts to discord.com; "123456" is its webhook id
        ("tgram://123456789:abcdefg/1234", []),
        ("ntfys://ntfy.sh/topic", [("ntfy.sh", 443)]),  # self-hosted scheme: checked whatever its cloud default
        ("matrix://user:pw@matrix.example/#room", [("matrix.example", 80)]),
        ("mailto://user:pw@example.com?smtp=mail.example", [("example.com", 25), ("mail.example", 25)]),
    ],
)
def test_what_a_service_connects_to(url, expected):
    assert targets.destinations(targets.service(url), targets.scheme_of(url)) == expected


def test_health_alerts_are_for_operators_only(alice_client, operator):
    refused = alice_client.post(LIST, {"url": "json://127.0.0.1:9/x", "health_alerts": True}, format="json")
    assert refused.status_code == 400 and "operators only" in str(refused.json())
    ops = APIClient()
    ops.force_authenticate(operator)
    accepted = ops.post(LIST, {"url": "json://127.0.0.1:9/x", "health_alerts": True}, format="json")
    assert accepted.status_code == 201 and accepted.json()["health_alerts"] is True


def test_another_users_url_cannot_be_removed_or_tested(alice_client, bob_client):
    target = alice_client.post(LIST, {"url": "json://127.0.0.1:9/x"}, format="json").json()
    assert bob_client.delete(f"{LIST}{target['id']}/").status_code == 404
    assert bob_client.post(f"{LIST}{target['id']}/test/").status_code == 404
    assert bob_client.get(LIST).json() == []
    assert NotificationTarget.objects.count() == 1 and not Job.objects.exists()
    assert alice_client.delete(f"{LIST}{target['id']}/").status_code == 204
    assert not NotificationTarget.objects.exists()


def test_anonymous_requests_are_refused(anon_client):
    assert anon_client.get(LIST).status_code in (401, 403)


def test_send_a_test_reaches_the_url(alice_client):
    with json_receiver() as receiver:
        target = alice_client.post(LIST, {"url": receiver.apprise_url("t", f"a:{SECRET}")}, format="json").json()
        assert alice_client.post(f"{LIST}{target['id']}/test/").status_code == 202
        job = Job.objects.get(kind="notify_send")
        assert SECRET not in str(job.payload)
        handle_notify_send(NotifySend(delivery_id=job.payload["delivery_id"]), None)
        (got,) = receiver.received
    assert got.body["title"] == "Mangalord test notification"
    assert Delivery.objects.get().sent_at is not None


def test_the_account_page_adds_lists_masked_tests_and_removes(client, alice):
    client.force_login(alice)
    page = reverse("notify:account")
    added = client.post(page, {"url": f"json://a:{SECRET}@127.0.0.1:9/x", "label": "desk", "digests": "on"})
    assert added.status_code == 302
    shown = client.get(page)
    html = shown.content.decode()
    assert "json://a:****@127.0.0.1:9/x" in html and SECRET not in html
    assert shown["Cache-Control"] == "no-store"
    target = NotificationTarget.objects.get()
    assert client.post(reverse("notify:test", args=[target.id])).status_code == 302
    assert Delivery.objects.get().kind == Delivery.Kind.TEST
    bad = client.post(page, {"url": "https://example.com", "digests": "on"})
    assert bad.status_code == 400 and "Apprise cannot use" in bad.content.decode()
    assert client.post(reverse("notify:remove", args=[target.id])).status_code == 302
    assert not NotificationTarget.objects.exists()
    assert "/account/notifications/" in client.get(reverse("reader:account")).content.decode()


def test_the_admin_shows_targets_masked(client, staff, alice):
    NotificationTarget.objects.create(user=alice, url=f"json://a:{SECRET}@127.0.0.1:9/x", scheme="json")
    client.force_login(staff)
    for page in ("/admin/notify/notificationtarget/", "/admin/notify/delivery/", "/admin/notify/healthcondition/"):
        response = client.get(page)
        assert response.status_code == 200, page
        assert SECRET not in response.content.decode()
    target = NotificationTarget.objects.get()
    detail = client.get(f"/admin/notify/notificationtarget/{target.id}/change/").content.decode()
    assert "json://a:****@127.0.0.1:9/x" in detail and SECRET not in detail
