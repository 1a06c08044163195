"""Migration catalog 0010 gives every existing manga a series of its own, under the manga's id, in two statements."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("catalog", "0011_source_kind_suwayomi")]
AFTER = [("catalog", "0012_series_above_source_mangas")]


@pytest.mark.sqlite_ok
@pytest.mark.django_db(transaction=True)
def test_every_existing_manga_becomes_a_series_of_its_own():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Manga = apps.get_model("catalog", "Manga")  # noqa: N806
    made = {Manga.objects.create(title=t).id: t for t in ("Harbour", "Tide", "Harbour")}
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        apps = executor.loader.project_state(AFTER).apps
        mangas = apps.get_model("catalog", "Manga").objects.all()
        series = {s.id: s for s in apps.get_model("catalog", "Series").objects.all()}
        assert {m.id: m.series_id for m in mangas} == {i: i for i in made}
        assert {i: (s.title, s.source_order, s.merged_into_id) for i, s in series.items()} == {
            i: (t, [], None) for i, t in made.items()
        }
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
