from django.apps import AppConfig


class ReaderConfig(AppConfig):
    name = "reader"
    default_auto_field = "django.db.models.BigAutoField"
