from django.db import migrations, models
from django.db.models import Q
from django.utils import timezone

DEDUP_MARKER = "demoted by migration 0002_inflight_dedup: duplicate in-flight job for dedup_key {key}; requeue to retry"


def demote_inflight_duplicates(apps, schema_editor):
    """Keep the oldest in-flight row per dedup key; demote the rest to dead.

    Without this, creating the unique constraint would refuse to apply on a
    database that already holds duplicates. The marker in last_error makes the
    demoted rows easy to find and requeue.
    """
    Job = apps.get_model("crawler", "Job")
    inflight = Job.objects.filter(state__in=["pending", "running"], dedup_key__isnull=False)
    seen = set()
    demote = []
    for job_id, key in inflight.order_by("dedup_key", "created_at", "id").values_list("id", "dedup_key"):
        if key in seen:
            demote.append((job_id, key))
        else:
            seen.add(key)
    now = timezone.now()
    for job_id, key in demote:
        Job.objects.filter(id=job_id).update(
            state="dead", leased_until=None, updated_at=now, last_error=DEDUP_MARKER.format(key=key)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0001_initial"),
        ("crawler", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(demote_inflight_duplicates, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="job",
            constraint=models.UniqueConstraint(
                condition=Q(state__in=["pending", "running"]),
                fields=("dedup_key",),
                name="crawler_jobs_inflight_dedup",
            ),
        ),
    ]
