"""The signed-in user of a session, read once a burst: no user query while remembered, and each way out still works.

Each guard has its test: a logout, a password change (this session and
another), a deactivation, a deleted user, a session whose hash was tampered
with, a user remembered by one session never served to another session's
different user.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from testsupport import api_factories as f

pytestmark = pytest.mark.django_db

HOME = "/"


@pytest.fixture
def page_url() -> str:
    source = f.source()
    chapter = f.chapter(f.manga("Remembered", src=source), 1, src=source)
    return f"/read/pages/{f.page(chapter).id}/image/"


@pytest.fixture
def reader():
    return get_user_model().objects.create_user("reader", password="reader-password")


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_remembered_session_user_costs_no_user_query(reader, page_url, django_assert_num_queries):
    client = signed_in(reader)
    assert client.get(page_url).status_code == 200
    # The session row and the page row: the user's is remembered.
    with django_assert_num_queries(2):
        assert client.get(page_url).status_code == 200


def _log_out(client, user) -> None:
    client.logout()


def _change_password(client, user) -> None:
    user.set_password("a-new-password")
    user.save()


def _tamper_with_the_session_hash(client, user) -> None:
    """What a password written behind the ORM (no signal forgets the user) leaves: a hash that no longer matches."""
    session = client.session
    session["_auth_user_hash"] = "tampered"
    session.save()


def _deactivate(client, user) -> None:
    user.is_active = False
    user.save(update_fields=["is_active"])


def _delete(client, user) -> None:
    user.delete()


@pytest.mark.parametrize(
    "way_out",
    [_log_out, _change_password, _tamper_with_the_session_hash, _deactivate, _delete],
    ids=lambda f: f.__name__,
)
def test_a_remembered_user_is_signed_out_at_once(reader, page_url, way_out):
    client = signed_in(reader)
    assert client.get(page_url).status_code == 200
    way_out(client, reader)
    assert client.get(page_url).status_code in {302, 401, 403}


def test_a_password_change_signs_other_sessions_out(reader, page_url):
    other = signed_in(reader)
    assert other.get(page_url).status_code == 200
    signed_in(reader)  # the session where the password is changed
    _change_password(None, reader)
    assert other.get(page_url).status_code in {302, 401, 403}


def test_each_session_gets_its_own_user(reader, page_url):
    other_user = get_user_model().objects.create_user("other", password="other-password")
    first, second = signed_in(reader), signed_in(other_user)
    for client, expected in ((first, "reader"), (second, "other"), (first, "reader")):
        client.get(page_url)
        response = client.get("/account/")
        assert response.status_code == 200
        assert response.wsgi_request.user.get_username() == expected
