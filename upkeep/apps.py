from django.apps import AppConfig


class UpkeepConfig(AppConfig):
    """Keeping the library whole: media-server rescans after exports, and the verify pass with its repairs."""

    name = "upkeep"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from catalog.signals import library_exported
        from jobs import kinds
        from upkeep.export_hook import rescan_after_export
        from upkeep.verify.handlers import UPKEEP_KINDS

        library_exported.connect(rescan_after_export, dispatch_uid="upkeep.rescan_after_export")
        kinds.register(*UPKEEP_KINDS)
