"""The kind registry: apps declare what runs; the engine decodes and leases only what was declared."""

import uuid
from dataclasses import dataclass
from typing import ClassVar

import pytest
from django.core.exceptions import ImproperlyConfigured

from jobs import kinds
from jobs.kinds import decode
from jobs.payloads import Payload, PayloadError
from jobs.worker.loop import WorkerConfig


@dataclass(frozen=True)
class Probe(Payload):
    kind: ClassVar[str] = "test_probe"
    target: uuid.UUID

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.target}"


@pytest.fixture
def probe_kind():
    before = kinds.registered()
    kind = kinds.Kind(Probe, lambda payload, ctx: None, role="probe", timeout_secs=7.5)
    kinds.register(kind)
    yield kind
    kinds._kinds.clear()
    kinds._kinds.update(before)


@pytest.mark.sqlite_ok
def test_the_apps_register_their_kinds_for_their_roles():
    assert set(kinds.for_role("crawl")) == {
        "sync_manga",
        "sync_chapter_list",
        "sync_chapter_content",
        "metadata_pass",
        "reconcile",
        "enqueue_downloads",
        "verify_library",
    }
    assert set(kinds.for_role("analyze")) == {"analyze_page"}
    assert set(kinds.for_role("notify")) == {"notify_send"}


@pytest.mark.sqlite_ok
def test_a_role_nobody_registered_is_an_error_naming_it():
    with pytest.raises(ImproperlyConfigured, match="'nobody'"):
        kinds.for_role("nobody")


@pytest.mark.sqlite_ok
def test_decode_knows_only_registered_kinds(probe_kind):
    target = uuid.uuid4()
    assert decode({"kind": "test_probe", "target": str(target)}) == Probe(target=target)
    with pytest.raises(PayloadError, match="unknown job kind 'never_registered'"):
        decode({"kind": "never_registered"})


@pytest.mark.sqlite_ok
def test_a_role_config_takes_the_kinds_handlers_and_timeouts(probe_kind, settings):
    config = WorkerConfig.for_role("probe", job_timeout_secs=30)
    assert config.kinds == ["test_probe"]
    assert config.handlers["test_probe"] is probe_kind.handler
    assert config.timeout_for("test_probe") == 7.5
    assert config.timeout_for("anything_else") == 30
