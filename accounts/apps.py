from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Who may read and who may log in: the access policy every reader protocol uses, and the login lockout."""

    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import signals

        signals.connect()
