"""Each series gets its lead: the manga readers list and address the series by (catalog.series_leads).

Two statements whatever the library's size: a manga under its series' own id
leads it (every series not touched by a merge or a split), then each series
still without a lead takes its oldest manga. The unique index follows, so a
series never has two.
"""

from django.db import migrations, models


def choose_leads(apps, schema_editor):
    quote = schema_editor.quote_name
    manga = quote("catalog_manga")
    schema_editor.execute(f"UPDATE {manga} SET leads_series = (id = series_id)")
    schema_editor.execute(
        f"UPDATE {manga} SET leads_series = TRUE WHERE id IN ("
        f"SELECT m.id FROM {manga} m WHERE NOT EXISTS ("
        f"SELECT 1 FROM {manga} l WHERE l.series_id = m.series_id AND l.leads_series) "
        f"AND NOT EXISTS (SELECT 1 FROM {manga} e WHERE e.series_id = m.series_id "
        f"AND (e.created_at < m.created_at OR (e.created_at = m.created_at AND e.id < m.id))))"
    )
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0012_series_above_source_mangas"),
    ]

    operations = [
        migrations.AddField(
            model_name="manga",
            name="leads_series",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.RunPython(choose_leads, migrations.RunPython.noop, elidable=False),
        migrations.AddConstraint(
            model_name="manga",
            constraint=models.UniqueConstraint(
                condition=models.Q(("leads_series", True)), fields=("series",), name="manga_one_lead_per_series"
            ),
        ),
    ]
