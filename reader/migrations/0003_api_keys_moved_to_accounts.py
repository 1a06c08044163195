"""API keys move to the accounts app (beside the other credentials the access policy checks), rows and all.

accounts 0001 made the new table; this copies every key into it with its id,
digests, name and dates (a straight INSERT ... SELECT: a model save would
stamp `created_at` anew), moves the id sequence past the copied ids on
PostgreSQL, and drops the reader's table. Apps that hold a key keep working.
Reversible: the keys are copied back the same way.
"""

from django.core.management.color import no_style
from django.db import migrations

COLUMNS = "id, user_id, name, hint, digest, kosync_digest, created_at, last_used_at"


def _copy(apps, schema_editor, source, target):
    connection = schema_editor.connection
    source_model = apps.get_model(*source)
    target_model = apps.get_model(*target)
    from_table = connection.ops.quote_name(source_model._meta.db_table)
    to_table = connection.ops.quote_name(target_model._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {to_table} ({COLUMNS}) SELECT {COLUMNS} FROM {from_table}")
        for statement in connection.ops.sequence_reset_sql(no_style(), [target_model]):
            cursor.execute(statement)


def keys_to_accounts(apps, schema_editor):
    _copy(apps, schema_editor, ("reader", "ApiKey"), ("accounts", "ApiKey"))


def keys_back_to_reader(apps, schema_editor):
    _copy(apps, schema_editor, ("accounts", "ApiKey"), ("reader", "ApiKey"))


class Migration(migrations.Migration):
    dependencies = [
        ("reader", "0002_api_keys_and_document_digests"),
        ("accounts", "0001_api_keys"),
    ]

    operations = [
        migrations.RunPython(keys_to_accounts, keys_back_to_reader),
        migrations.DeleteModel(name="ApiKey"),
    ]
