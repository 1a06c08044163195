"""Migration catalog 0005 gives stored rows what new crawls get: clean text and chapter titles without labels."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("catalog", "0004_title_search_length_indexes")]
AFTER = [("catalog", "0005_clean_crawled_text_and_chapter_titles")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_cleans_crawled_text_and_cuts_chapter_labels():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Source, Manga, Chapter, Tag = (apps.get_model("catalog", n) for n in ("Source", "Manga", "Chapter", "Tag"))  # noqa: N806
    source = Source.objects.create(id="s", name="S", base_url="https://example.com")
    manga = Manga.objects.create(
        title="Night\x01 Gate\u202e", description="a\x1bb", alt_titles=["x\ufffe"], authors=["Aki\x01"]
    )
    clean, dirty = Tag.objects.create(name="Drama"), Tag.objects.create(name="Drama\u202e")
    manga.tags.add(dirty)
    for number, title in ((1, "Chapter 1: Burning Tower"), (2, "Ch. 2"), (3, "Episode 3 - Home\x01")):
        Chapter.objects.create(
            manga=manga, source=source, source_chapter_key=str(number), number=Decimal(number), title=title
        )
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        apps = executor.loader.project_state(AFTER).apps
        manga = apps.get_model("catalog", "Manga").objects.get()
        assert (manga.title, manga.description, manga.alt_titles, manga.authors) == ("Night Gate", "ab", ["x"], ["Aki"])
        assert [t.name for t in manga.tags.all()] == ["Drama"] and manga.tags.get().id == clean.id
        titles = list(apps.get_model("catalog", "Chapter").objects.order_by("number").values_list("title", flat=True))
        assert titles == ["Burning Tower", "", "Home"]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
