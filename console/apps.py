from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The operator console: dashboard, live stream, operator API and controls, and the composed admin."""

    name = "console"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from console import admin

        admin.install()
