"""Every control action leaves an audit row and, once committed, signals open dashboards."""

import pytest
from django.db import connection, transaction

from console.control import actions
from crawler.models import AuditEvent
from jobs.wakeup import listen_connection
from jobs.worker.status.notify import STATUS_CHANNEL

on_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY needs PostgreSQL")


@pytest.fixture
def status_listener():
    with listen_connection(STATUS_CHANNEL) as conn:
        yield conn


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_control_action_signals_dashboards_after_its_audit_row_commits(status_listener, staff):
    generation = actions.restart_browser(actor=staff)

    notes = list(status_listener.notifies(timeout=5, stop_after=1))
    assert [n.payload for n in notes] == ["restart_browser"]
    event = AuditEvent.objects.get()
    assert (event.actor, event.action, event.detail) == (staff, "restart_browser", {"generation": generation})


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_control_action_signals_nothing(status_listener, staff):
    with pytest.raises(RuntimeError), transaction.atomic():
        actions.restart_browser(actor=staff)
        raise RuntimeError("the caller's transaction fails after the action")

    assert list(status_listener.notifies(timeout=0.5, stop_after=1)) == []
    assert not AuditEvent.objects.exists()
