"""API keys get a scope: every key made before scopes existed becomes `read`.

Those keys were made for reading apps (the account page said so), so none
is promoted: an operator who wants a key for the crawler's control API makes
a new one scoped `operate`.
"""

from django.db import migrations, models


def existing_keys_read(apps, schema_editor):
    apps.get_model("accounts", "ApiKey").objects.exclude(scope="read").update(scope="read")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_api_keys"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="scope",
            field=models.CharField(
                choices=[
                    ("read", "read: library, pages, progress (reading apps)"),
                    ("operate", "operate: also the crawler's control API (operators)"),
                ],
                default="read",
                db_default="read",
                max_length=8,
            ),
        ),
        migrations.RunPython(existing_keys_read, migrations.RunPython.noop),
    ]
