"""The job's source as a column (crawler_jobs.source_id), backfilled from the payload, and the lease index on it.

queue.lease leaves cooling or paused sources out and workers ask for their
kinds; with the source only inside the JSON payload, a lease behind a million
jobs of one excluded source read and threw away every one of them. The
backfill covers the rows that can still be leased or revived (pending,
running, dead, failed): done rows are never leased again, and leaving them
out keeps the migration short on a table of millions of done jobs.
"""

from django.db import migrations, models

STATES = "('pending', 'running', 'dead', 'failed')"


def backfill(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    source = "payload ->> 'source_id'" if vendor == "postgresql" else "json_extract(payload, '$.source_id')"
    schema_editor.execute(
        f"UPDATE crawler_jobs SET source_id = {source} WHERE state IN {STATES} AND {source} IS NOT NULL"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0004_keyset_paging_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="source_id",
            field=models.CharField(blank=True, db_default="", default="", max_length=100),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=False),
        migrations.AddIndex(
            model_name="job",
            index=models.Index(
                condition=models.Q(("state__in", ["pending", "running"])),
                fields=["source_id", "kind", "scheduled_at", "created_at"],
                name="crawler_jobs_source_lease_idx",
            ),
        ),
    ]
