from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "notify"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Plug notifications in: the send kind, the "chapter is ready" receiver, the health probes of the engine."""
        from catalog.signals import chapter_ready
        from jobs import kinds
        from notify import receivers
        from notify.handlers import NOTIFY_KINDS
        from notify.health import probes

        kinds.register(*NOTIFY_KINDS)
        probes.register_builtin()
        chapter_ready.connect(receivers.record_ready_chapter, dispatch_uid="notify.chapter_ready")
