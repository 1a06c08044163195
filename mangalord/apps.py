from django.apps import AppConfig


class MangalordConfig(AppConfig):
    """The project: it wires what two apps that may not import each other share (the crawler's health, notify)."""

    name = "mangalord"

    def ready(self) -> None:
        from mangalord import health_probes

        health_probes.register()
