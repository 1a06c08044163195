from django.apps import AppConfig


class ReaderConfig(AppConfig):
    name = "reader"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from catalog import source_settings
        from reader import source_settings as reader_keys

        source_settings.register("reader", reader_keys.KEYS, reader_keys.validate)
