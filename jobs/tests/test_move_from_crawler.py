"""The job tables moved from `crawler` to `jobs` without a copy: rows, permissions and admin links survive."""

import uuid

import pytest
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("crawler", "0007_operate_crawler_permission"), ("jobs", None)]


@pytest.mark.sqlite_ok
@pytest.mark.django_db(transaction=True)
def test_a_job_row_and_the_operators_view_permission_survive_the_move(migrator):
    apps = migrator(BEFORE)
    old_job = apps.get_model("crawler", "Job")
    now = timezone.now()
    job_id = old_job.objects.create(
        kind="sync_manga",
        payload={"kind": "sync_manga", "source_id": "demo", "source_manga_key": "k"},
        state="running",
        attempts=1,
        lease_generation=3,
        dedup_key="sync_manga:demo:k",
        leased_until=now,
        scheduled_at=now,
        created_at=now,
        updated_at=now,
    ).id
    operators = apps.get_model("auth", "Group").objects.get(name="Operators")
    assert operators.permissions.filter(content_type__app_label="crawler", codename="view_job").exists()

    migrator(MigrationExecutor(connection).loader.graph.leaf_nodes())
    ContentType.objects.clear_cache()

    from jobs.models import Job

    row = Job.objects.get(id=job_id)
    assert (row.state, row.attempts, row.lease_generation) == ("running", 1, 3)  # not re-run, not reset
    assert ContentType.objects.get_for_model(Job).app_label == "jobs"
    assert not ContentType.objects.filter(app_label="crawler", model__in=["job", "workerstatus"]).exists()
    codenames = set(
        Group.objects.get(name="Operators")
        .permissions.filter(content_type__app_label="jobs")
        .values_list("codename", flat=True)
    )
    assert codenames == {"view_job", "view_workerstatus"}
    assert uuid.UUID(str(job_id))
