"""The session store's one-statement read finds what Django's database store finds, and nothing else."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore as DjangoStore
from django.contrib.sessions.models import Session
from django.utils import timezone

from accounts.session_store import SessionStore

pytestmark = [pytest.mark.sqlite_ok, pytest.mark.django_db]


@pytest.fixture
def saved():
    store = DjangoStore()
    store["_auth_user_id"] = "42"
    store["theme"] = "dark"
    store.create()
    return store.session_key


def test_a_live_session_loads_as_djangos_store_loads_it(saved):
    ours, theirs = SessionStore(saved), DjangoStore(saved)
    assert ours.load() == theirs.load() == {"_auth_user_id": "42", "theme": "dark"}
    assert ours.session_key == theirs.session_key == saved
    row, expected = ours._get_session_from_db(), Session.objects.get(pk=saved)
    assert (row.session_key, row.session_data, row.expire_date) == (
        expected.session_key,
        expected.session_data,
        expected.expire_date,
    )


def test_an_expired_session_loads_empty_and_forgets_its_key(saved):
    Session.objects.filter(pk=saved).update(expire_date=timezone.now() - timedelta(seconds=1))
    for store in (SessionStore(saved), DjangoStore(saved)):
        assert store.load() == {}
        assert store.session_key is None


@pytest.mark.parametrize("key", ["x" * 32, "short", None])
def test_an_unknown_or_invalid_key_loads_empty(saved, key):
    store = SessionStore(key)
    assert store.load() == {}
    assert store.session_key is None


def test_a_read_is_one_statement(saved, django_assert_num_queries):
    with django_assert_num_queries(1):
        SessionStore(saved).load()


def test_saving_and_deleting_stay_djangos(saved):
    store = SessionStore(saved)
    store["theme"] = "light"
    store.save()
    assert DjangoStore(saved).load()["theme"] == "light"
    store.delete()
    assert not Session.objects.filter(pk=saved).exists()
