"""Migration reader 0003 moves API keys into the accounts app: every key keeps its id, digests and dates, and works."""

import hashlib
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

OLD_KEYS = ("reader", "0002_api_keys_and_document_digests")
BEFORE = [OLD_KEYS, ("accounts", None)]
RAW = "mlk_" + "k" * 43


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.django_db(transaction=True)
def test_keys_made_before_the_move_keep_their_rows_and_still_sign_in():
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(BEFORE)
        apps = executor.loader.project_state([OLD_KEYS]).apps
        user = apps.get_model("auth", "User").objects.create(username="alice", is_active=True)
        old_keys = apps.get_model("reader", "ApiKey")
        made, used = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC), datetime(2025, 6, 7, 8, 9, 10, tzinfo=UTC)
        for n, raw in enumerate((RAW, "mlk_other"), start=41):
            digests = {"digest": _sha256(raw), "kosync_digest": _sha256(f"md5-{n}")}
            old_keys.objects.create(id=n, user=user, name=f"key {n}", hint=raw[4:10], **digests)
        old_keys.objects.filter(id=41).update(created_at=made, last_used_at=used)

        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        from accounts import api_keys

        moved = {k.id: k for k in api_keys.ApiKey.objects.all()}
        assert set(moved) == {41, 42}
        assert (moved[41].name, moved[41].user.username, moved[41].digest) == ("key 41", "alice", _sha256(RAW))
        assert (moved[41].created_at, moved[41].last_used_at) == (made, used)
        assert moved[42].kosync_digest == _sha256("md5-42")
        assert Client().get("/api/v1/series", HTTP_X_API_KEY=RAW).status_code == 200
        new, _ = api_keys.mint(moved[41].user, "after the move")  # the id sequence starts past the copied ids
        assert new.id > 42
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
