"""Job and WorkerStatus now belong to the `jobs` app (jobs 0001): dropped from this app's state only.

The tables stay, under their names, as the `jobs` models' tables.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('crawler', '0007_operate_crawler_permission'),
        ('jobs', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='job',
                    name='chapter',
                ),
                migrations.RemoveField(
                    model_name='job',
                    name='manga',
                ),
                migrations.RemoveField(
                    model_name='job',
                    name='page',
                ),
                migrations.DeleteModel(
                    name='WorkerStatus',
                ),
                migrations.DeleteModel(
                    name='Job',
                ),
            ],
        ),
    ]
