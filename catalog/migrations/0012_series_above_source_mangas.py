"""Series above the per-source mangas: every existing manga becomes a series of its own, under the manga's id.

Two statements whatever the library's size (100k mangas take seconds, not a
row-by-row walk): the series rows are copied from the manga rows, then each
manga points at the series of its own id. Matching (`manage.py group_series`)
merges them afterwards. The Operators group gets the merge permission.
"""

import django.db.models.deletion
import uuid
from django.conf import settings
from django.db import migrations, models


MERGE = ("catalog", "series", "merge_series", "Can merge and split series")


def one_series_per_manga(apps, schema_editor):
    quote = schema_editor.quote_name
    empty = "'[]'::jsonb" if schema_editor.connection.vendor == "postgresql" else "'[]'"
    schema_editor.execute(
        f"INSERT INTO {quote('catalog_series')} (id, title, source_order, merged_into_id, created_at, updated_at) "
        f"SELECT id, title, {empty}, NULL, created_at, updated_at FROM {quote('catalog_manga')}"
    )
    schema_editor.execute(f"UPDATE {quote('catalog_manga')} SET series_id = id")
    if schema_editor.connection.vendor == "postgresql":
        # Check the deferred foreign keys now: PostgreSQL refuses the next ALTER TABLE with triggers pending.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def grant_merge_to_operators(apps, schema_editor):
    """Operators merge and split series (the group of crawler migration 0007), as they confirm suggestions."""
    group = apps.get_model("auth", "Group").objects.filter(name="Operators").first()
    if group is None:
        return
    content_type, _ = apps.get_model("contenttypes", "ContentType").objects.get_or_create(
        app_label=MERGE[0], model=MERGE[1]
    )
    permission, _ = apps.get_model("auth", "Permission").objects.get_or_create(
        content_type=content_type, codename=MERGE[2], defaults={"name": MERGE[3]}
    )
    group.permissions.add(permission)


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0011_source_kind_suwayomi'),
        ('crawler', '0007_operate_crawler_permission'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='manga',
            name='cover_hash',
            field=models.CharField(blank=True, db_default='', default='', max_length=16),
        ),
        migrations.CreateModel(
            name='Series',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('title', models.CharField(max_length=500)),
                ('source_order', models.JSONField(blank=True, default=list)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('merged_into', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='absorbed', to='catalog.series')),
            ],
            options={
                'verbose_name_plural': 'series',
                'permissions': [('merge_series', 'Can merge and split series')],
            },
        ),
        migrations.AddField(
            model_name='manga',
            name='series',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='mangas', to='catalog.series'),
        ),
        migrations.RunPython(one_series_per_manga, migrations.RunPython.noop, elidable=False),
        migrations.AlterField(
            model_name='manga',
            name='series',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='mangas', to='catalog.series'),
        ),
        migrations.CreateModel(
            name='SeriesChange',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('action', models.CharField(choices=[('merge', 'Merge'), ('split', 'Split'), ('undo', 'Undo')], max_length=8)),
                ('via', models.CharField(max_length=32)),
                ('reason', models.CharField(blank=True, max_length=500)),
                ('moves', models.JSONField(default=list)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('actor', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ('undoes', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='undone_by', to='catalog.serieschange')),
            ],
            options={
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='SeriesSuggestion',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('evidence', models.JSONField(default=list)),
                ('state', models.CharField(choices=[('pending', 'Pending'), ('confirmed', 'Confirmed'), ('rejected', 'Rejected')], default='pending', max_length=10)),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('decided_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ('first', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.series')),
                ('second', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.series')),
            ],
        ),
        migrations.CreateModel(
            name='MangaMatchKey',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=200)),
                ('manga', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='match_keys', to='catalog.manga')),
            ],
            options={
                'indexes': [models.Index(fields=['key', 'manga'], name='manga_match_key_idx')],
                'constraints': [models.UniqueConstraint(fields=('manga', 'key'), name='manga_match_key_unique')],
            },
        ),
        migrations.AddIndex(
            model_name='series',
            index=models.Index(condition=models.Q(('merged_into__isnull', True)), fields=['title', 'id'], name='series_live_title_idx'),
        ),
        migrations.AddIndex(
            model_name='seriessuggestion',
            index=models.Index(condition=models.Q(('state', 'pending')), fields=['created_at', 'id'], name='series_suggestion_pending_idx'),
        ),
        migrations.AddConstraint(
            model_name='seriessuggestion',
            constraint=models.UniqueConstraint(fields=('first', 'second'), name='series_suggestion_unique_pair'),
        ),
        migrations.RunPython(grant_merge_to_operators, migrations.RunPython.noop),
    ]
