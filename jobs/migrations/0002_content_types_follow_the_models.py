"""The content types of Job and WorkerStatus follow the models from `crawler` to `jobs`.

Permissions hang on content types: renaming the type keeps every permission
row, so the Operators group (crawler 0007) keeps `view_job` and
`view_workerstatus`, and admin log entries keep pointing at their objects.
Where both types exist already (a database whose post_migrate ran with the
new app before this), the old type's grants move to the new type's
permissions and the old type goes.
"""

from django.db import migrations

MODELS = ("job", "workerstatus")


def _move(apps, source, target):
    content_type = apps.get_model("contenttypes", "ContentType")
    permission = apps.get_model("auth", "Permission")
    for model in MODELS:
        old = content_type.objects.filter(app_label=source, model=model).first()
        if old is None:
            continue
        new = content_type.objects.filter(app_label=target, model=model).first()
        if new is None:
            old.app_label = target
            old.save(update_fields=["app_label"])
            continue
        for perm in permission.objects.filter(content_type=old):
            twin, _ = permission.objects.get_or_create(
                content_type=new, codename=perm.codename, defaults={"name": perm.name}
            )
            for group in perm.group_set.all():
                group.permissions.add(twin)
            for user in perm.user_set.all():
                user.user_permissions.add(twin)
        old.delete()


def forward(apps, schema_editor):
    _move(apps, "crawler", "jobs")


def backward(apps, schema_editor):
    _move(apps, "jobs", "crawler")


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("crawler", "0007_operate_crawler_permission"),
        ("jobs", "0001_initial"),
    ]

    operations = [migrations.RunPython(forward, backward)]
