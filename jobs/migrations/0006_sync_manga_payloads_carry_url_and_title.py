"""`sync_manga` payloads enqueued before they carried `url` and `title` get both, once, from the stored link.

The handler used to fall back to the manga's stored link (catalog
MangaSource) on every run of such a job; now the payload fields are required
and this fills them where they are missing: `url` from the link, `title`
from its manga ("" where no link is stored, as the old rows decoded; the
handler then fails that job naming the missing url, and a reconcile pass
enqueues it again with one). Pending and running rows, and dead and failed
ones, which an operator's requeue can revive; done rows are never read again.
"""

from django.db import migrations

BATCH = 2000
STATES = ["pending", "running", "dead", "failed"]


def forwards(apps, schema_editor):
    Job = apps.get_model("jobs", "Job")
    MangaSource = apps.get_model("catalog", "MangaSource")
    old = Job.objects.filter(kind="sync_manga", state__in=STATES).exclude(payload__has_keys=["url", "title"])
    ids = list(old.values_list("id", flat=True))
    for start in range(0, len(ids), BATCH):
        jobs = list(Job.objects.filter(id__in=ids[start : start + BATCH]).only("id", "payload"))
        wanted = {(job.payload.get("source_id"), job.payload.get("source_manga_key")) for job in jobs}
        links = {
            (link.source_id, link.source_manga_key): link
            for link in MangaSource.objects.filter(
                source_id__in={source for source, _ in wanted}, source_manga_key__in={key for _, key in wanted}
            ).select_related("manga")
        }
        for job in jobs:
            payload = dict(job.payload)
            link = links.get((payload.get("source_id"), payload.get("source_manga_key")))
            payload.setdefault("url", link.url if link else "")
            payload.setdefault("title", link.manga.title if link else "")
            job.payload = payload
        Job.objects.bulk_update(jobs, ["payload"])


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0005_job_source_column"),
        ("catalog", "0007_keyset_paging_indexes"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
