"""The crawler.operate_crawler permission and an "Operators" group holding it.

Control of the crawler (passes, browser restarts, requeues, session cookies,
force re-analysis, cooldowns) needs this permission instead of `is_staff`.
The group also gets view access to the admin pages its actions live on.
Permissions are normally created after all migrations (post_migrate), so
this migration creates the ones it hands out itself, with the names Django
would give them; the later post_migrate step finds them present.
"""

from django.db import migrations

OPERATE = ("crawler", "crawlerstate", "operate_crawler", "Can operate the crawler (passes, requeues, sessions)")
VIEWS = [
    ("crawler", "job", "job"),
    ("crawler", "sourcethrottle", "source throttle"),
    ("crawler", "auditevent", "audit event"),
    ("crawler", "workerstatus", "worker status"),
    ("crawler", "crawlerstate", "crawler state"),
    ("catalog", "manga", "manga"),
    ("catalog", "chapter", "chapter"),
]


def _permission(apps, app_label, model, codename, name):
    content_type, _ = apps.get_model("contenttypes", "ContentType").objects.get_or_create(
        app_label=app_label, model=model
    )
    permission, _ = apps.get_model("auth", "Permission").objects.get_or_create(
        content_type=content_type, codename=codename, defaults={"name": name}
    )
    return permission


def create_operators(apps, schema_editor):
    group, _ = apps.get_model("auth", "Group").objects.get_or_create(name="Operators")
    group.permissions.add(_permission(apps, *OPERATE))
    for app_label, model, verbose in VIEWS:
        group.permissions.add(_permission(apps, app_label, model, f"view_{model}", f"Can view {verbose}"))


def remove_operators(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="Operators").delete()
    apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="crawler", codename="operate_crawler"
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("catalog", "0001_initial"),
        ("crawler", "0006_job_indexes_skip_done_and_unset"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="crawlerstate",
            options={"permissions": [(OPERATE[2], OPERATE[3])]},
        ),
        migrations.RunPython(create_operators, remove_operators),
    ]
