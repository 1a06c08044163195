"""Migration catalog 0009 reads stored chapters again: side stories stored under main numbers become extras."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("catalog", "0008_chapter_keys_are_whole_paths")]
AFTER = [("catalog", "0009_chapter_kind_and_volume")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_reclassifies_rows_whose_title_still_holds_the_printed_text():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Source, Manga, Chapter = (apps.get_model("catalog", n) for n in ("Source", "Manga", "Chapter"))  # noqa: N806
    source = Source.objects.create(id="s", name="S", base_url="https://example.com")
    manga = Manga.objects.create(title="Harbour")
    stored = [
        ("1", "", "c1"),  # "Chapter 1": the label was cut
        ("1", "Side Story 1", "ss1"),  # the old first-number reading
        ("2", "Side Story 2 - Home", "ss2"),
        ("2", "Vol.2 Chapter 12 - Gate", "v2c12"),  # the volume was read as the number
        ("50", "Epilogue", "c50"),  # "Chapter 50 - Epilogue": an own name, left alone
    ]
    for number, title, key in stored:
        Chapter.objects.create(manga=manga, source=source, source_chapter_key=key, number=Decimal(number), title=title)
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        apps = executor.loader.project_state(AFTER).apps
        rows = apps.get_model("catalog", "Chapter").objects.order_by("source_chapter_key")
        assert {c.source_chapter_key: (c.kind, c.volume, c.number, c.title) for c in rows} == {
            "c1": ("chapter", None, Decimal("1"), ""),
            "ss1": ("extra", None, Decimal("1"), "Side Story 1"),
            "ss2": ("extra", None, Decimal("2"), "Side Story 2: Home"),
            "v2c12": ("chapter", 2, Decimal("12"), "Gate"),
            "c50": ("chapter", None, Decimal("50"), "Epilogue"),
        }
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
