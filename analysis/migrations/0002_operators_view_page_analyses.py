"""The "Operators" group (crawler 0007) may view page analyses, where its force re-analysis action lives."""

from django.db import migrations


def grant(apps, schema_editor):
    content_type, _ = apps.get_model("contenttypes", "ContentType").objects.get_or_create(
        app_label="analysis", model="pageanalysis"
    )
    permission, _ = apps.get_model("auth", "Permission").objects.get_or_create(
        content_type=content_type, codename="view_pageanalysis", defaults={"name": "Can view page analysis"}
    )
    group = apps.get_model("auth", "Group").objects.filter(name="Operators").first()
    if group is not None:
        group.permissions.add(permission)


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0001_initial"),
        ("crawler", "0007_operate_crawler_permission"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
