"""Series may download every source's copy of a chapter; the lead of each merged series carries its newest chapter.

`download_alternates` is off for every series (each chapter key downloaded
once, as before). Readers sort "latest" by the lead's `latest_chapter_at`,
which now stands for the whole series (catalog.series_leads): one statement
gives the lead of each series holding several mangas the newest live chapter
time of all of them; a series of one manga is left as it is (its lead's own
time is its series').
"""

from django.db import migrations, models


def series_wide_lead_dates(apps, schema_editor):
    quote = schema_editor.quote_name
    manga, chapter = quote("catalog_manga"), quote("catalog_chapter")
    schema_editor.execute(
        f"UPDATE {manga} SET latest_chapter_at = ("
        f"SELECT MAX(COALESCE(c.published_at, c.created_at)) FROM {chapter} c JOIN {manga} o ON o.id = c.manga_id "
        f"WHERE o.series_id = {manga}.series_id AND c.dropped_at IS NULL) "
        f"WHERE leads_series AND EXISTS ("
        f"SELECT 1 FROM {manga} e WHERE e.series_id = {manga}.series_id AND e.id <> {manga}.id)"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0014_lead_list_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="series",
            name="download_alternates",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.RunPython(series_wide_lead_dates, migrations.RunPython.noop, elidable=False),
    ]
