"""Title search at scale on PostgreSQL: pg_trgm, unaccent, normalised title columns with GIN trigram indexes.

Used by catalog/search.py. Only PostgreSQL: on SQLite the operation does
nothing and search stays a plain icontains. The extensions are trusted
(PostgreSQL 13+), so the database owner may create them.

The normalised (lower-cased, accent-stripped) title and alternative titles
are STORED generated columns, so a search neither re-normalises every
candidate row nor can the columns drift from the titles: PostgreSQL keeps
them in step on every write. The model does not declare them; only the
search reads them.
"""

from django.db import migrations

# unaccent() is only STABLE (its dictionary could change), so it can neither
# be indexed nor generate a column; these wrappers pin the dictionary and are
# declared IMMUTABLE. Names are schema-qualified so that a dump restored
# with an empty search_path regenerates the columns.
FUNCTIONS = """
CREATE OR REPLACE FUNCTION {schema}.catalog_search_norm(value text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT lower({unaccent}.unaccent('{unaccent}.unaccent'::regdictionary, value)) $$;
CREATE OR REPLACE FUNCTION {schema}.catalog_alt_titles_norm(value jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT {schema}.catalog_search_norm(coalesce(string_agg(title, E'\\n'), ''))
          FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(value) = 'array' THEN value ELSE '[]' END)
          AS title $$;
"""

COLUMNS = {
    # column: (generating expression, GIN trigram index)
    "search_title": ("{schema}.catalog_search_norm(title)", "catalog_manga_title_trgm"),
    "search_alt_titles": ("{schema}.catalog_alt_titles_norm(alt_titles)", "catalog_manga_alt_titles_trgm"),
}


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS unaccent")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_schema(), extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'unaccent'"
        )
        schema, unaccent = cursor.fetchone()
    schema_editor.execute(FUNCTIONS.format(schema=schema, unaccent=unaccent))
    for column, (expression, index) in COLUMNS.items():
        schema_editor.execute(
            f"ALTER TABLE catalog_manga ADD COLUMN {column} text "
            f"GENERATED ALWAYS AS ({expression.format(schema=schema)}) STORED"
        )
        schema_editor.execute(f"CREATE INDEX {index} ON catalog_manga USING gin ({column} gin_trgm_ops)")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for column in COLUMNS:  # dropping a column drops its index
        schema_editor.execute(f"ALTER TABLE catalog_manga DROP COLUMN IF EXISTS {column}")
    schema_editor.execute("DROP FUNCTION IF EXISTS catalog_alt_titles_norm(jsonb)")
    schema_editor.execute("DROP FUNCTION IF EXISTS catalog_search_norm(text)")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0002_manga_latest_chapter_nulls_last")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
