"""The job and worker-status models, moved here from the crawler app: state only, the tables stay as they are.

The tables keep their names (`crawler_jobs`, `crawler_worker_status`), so an
existing database gains no operation at all: no job is copied, lost or run
twice. crawler 0008 drops the models from the crawler's state.
"""

import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('catalog', '0001_initial'),
        ('crawler', '0007_operate_crawler_permission'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='WorkerStatus',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('role', models.CharField(max_length=32)),
                        ('host', models.CharField(max_length=255)),
                        ('pid', models.IntegerField()),
                        ('kinds', models.JSONField(default=list)),
                        ('worker_count', models.IntegerField(default=1)),
                        ('phase', models.JSONField(default=dict)),
                        ('active_chapters', models.JSONField(default=list)),
                        ('current_cover', models.JSONField(blank=True, null=True)),
                        ('flags', models.JSONField(default=dict)),
                        ('started_at', models.DateTimeField(auto_now_add=True)),
                        ('heartbeat_at', models.DateTimeField(db_index=True)),
                        ('stopped_at', models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        'verbose_name_plural': 'worker statuses',
                        'db_table': 'crawler_worker_status',
                    },
                ),
                migrations.CreateModel(
                    name='Job',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('kind', models.CharField(max_length=40)),
                        ('payload', models.JSONField()),
                        ('state', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed'), ('dead', 'Dead')], default='pending', max_length=10)),
                        ('attempts', models.IntegerField(default=0)),
                        ('max_attempts', models.IntegerField(default=5)),
                        ('deferrals', models.IntegerField(db_default=0, default=0)),
                        ('lease_generation', models.BigIntegerField(default=0)),
                        ('leased_until', models.DateTimeField(blank=True, null=True)),
                        ('scheduled_at', models.DateTimeField()),
                        ('created_at', models.DateTimeField()),
                        ('updated_at', models.DateTimeField()),
                        ('last_error', models.TextField(blank=True, default='')),
                        ('dedup_key', models.CharField(blank=True, max_length=200, null=True)),
                        ('chapter', models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='catalog.chapter')),
                        ('manga', models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='catalog.manga')),
                        ('page', models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='catalog.page')),
                    ],
                    options={
                        'db_table': 'crawler_jobs',
                        'indexes': [models.Index(condition=models.Q(('state__in', ['pending', 'running'])), fields=['scheduled_at', 'created_at'], name='crawler_jobs_leasable_idx'), models.Index(condition=models.Q(('state', 'dead')), fields=['-updated_at'], name='crawler_jobs_dead_idx'), models.Index(condition=models.Q(('state__in', ['pending', 'running', 'dead'])), fields=['state', 'kind'], name='crawler_jobs_counted_idx'), models.Index(fields=['-updated_at'], name='crawler_jobs_updated_idx'), models.Index(condition=models.Q(('manga__isnull', False)), fields=['manga'], name='crawler_jobs_manga_idx'), models.Index(condition=models.Q(('chapter__isnull', False)), fields=['chapter'], name='crawler_jobs_chapter_idx'), models.Index(condition=models.Q(('page__isnull', False)), fields=['page'], name='crawler_jobs_page_idx')],
                        'constraints': [models.UniqueConstraint(condition=models.Q(('state__in', ['pending', 'running'])), fields=('dedup_key',), name='crawler_jobs_inflight_dedup')],
                    },
                ),
            ],
        ),
    ]
