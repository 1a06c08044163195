"""The operator's job search finds `sync_manga` rows by their payload title through an index.

Used by console.control.backlog.matching_job_ids: `payload__title__icontains`
compiles to UPPER((payload ->> 'title')::text) LIKE UPPER('%q%'), which this
GIN trigram index (pg_trgm: catalog migration 0003) answers without reading
a table of millions of jobs. Partial: only sync_manga rows carry a title.
PostgreSQL only; on SQLite the operation does nothing.
"""

from django.db import migrations

INDEX = "crawler_jobs_sync_manga_title_trgm"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE INDEX {INDEX} ON crawler_jobs USING gin ((UPPER((payload ->> 'title')::text)) gin_trgm_ops) "
        "WHERE kind = 'sync_manga'"
    )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0002_content_types_follow_the_models"),
        ("catalog", "0003_title_search_trigram"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
