"""Title search ranks substring matches by the matched title's length: index that order (PostgreSQL only).

catalog/search.py cuts a page of a common word from the shortest matches
(`SubstringRanked`): one walk of each index below, in the search's order
(the normalised length, then the list's latest-chapter keys), stopping
after the page. NULLIF keeps mangas without alternative titles at the end
of the second index, where a walk never reaches them.

The normalised columns also get a finer sample (1,000 histogram entries
instead of 100), so the planner takes the trigram bitmap rather than a
scan of the table for a query that a few hundred titles contain. On SQLite
the operation does nothing, as migration 0003's.
"""

from django.db import migrations

LATEST_CHAPTER_KEYS = "(latest_chapter_at IS NULL), latest_chapter_at DESC, created_at DESC, id DESC"
INDEXES = {
    "catalog_manga_title_length": "length(search_title)",
    "catalog_manga_alt_titles_length": "NULLIF(length(search_alt_titles), 0)",
}

STATISTICS = (
    "ALTER TABLE catalog_manga ALTER COLUMN search_title SET STATISTICS {target}, "
    "ALTER COLUMN search_alt_titles SET STATISTICS {target}"
)


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, key in INDEXES.items():
        schema_editor.execute(f"CREATE INDEX {name} ON catalog_manga ({key}, {LATEST_CHAPTER_KEYS})")
    schema_editor.execute(STATISTICS.format(target=1000))


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")
    schema_editor.execute(STATISTICS.format(target=-1))  # back to default_statistics_target


class Migration(migrations.Migration):
    dependencies = [("catalog", "0003_title_search_trigram")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
