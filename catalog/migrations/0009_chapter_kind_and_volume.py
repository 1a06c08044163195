"""Chapters get a kind (main chapter or extra) and a volume; stored rows are read again from their titles.

Existing rows become main chapters; those whose stored title still holds the
site's whole text are reclassified (catalog.chapter_numbers.reclassified):
"Side Story 3", stored as chapter 3, becomes extra 3; "Vol.2 Chapter 12",
stored as chapter 2, becomes volume 2 chapter 12.
"""

from django.db import migrations, models

from catalog.chapter_numbers import reclassified

BATCH = 2000


def forwards(apps, schema_editor):
    Chapter = apps.get_model("catalog", "Chapter")
    fields = ["kind", "volume", "number", "title"]
    changed = []
    for chapter in Chapter.objects.exclude(title="").only("id", "number", "title").iterator(chunk_size=BATCH):
        name = reclassified(chapter.number, chapter.title)
        if name is None:
            continue
        chapter.kind, chapter.volume, chapter.number, chapter.title = name.kind, name.volume, name.number, name.title
        changed.append(chapter)
        if len(changed) >= BATCH:
            Chapter.objects.bulk_update(changed, fields)
            changed = []
    Chapter.objects.bulk_update(changed, fields)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0008_chapter_keys_are_whole_paths"),
    ]

    operations = [
        migrations.AddField(
            model_name="chapter",
            name="kind",
            field=models.CharField(
                choices=[("chapter", "Chapter"), ("extra", "Extra")],
                default="chapter",
                db_default="chapter",
                max_length=8,
            ),
        ),
        migrations.AddField(
            model_name="chapter",
            name="volume",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="chapter",
            index=models.Index(
                fields=["manga", "kind", "volume", "number", "created_at", "id"], name="chapter_reading_order_idx"
            ),
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
