from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from catalog.models import Manga

        post_delete.connect(_lead_again, sender=Manga, dispatch_uid="catalog.series_lead_after_delete")


def _lead_again(sender: object, instance: object, **kwargs: object) -> None:
    """A deleted lead leaves its series to its next manga, so the series stays listed."""
    from catalog.series_leads import refresh_leads

    if getattr(instance, "leads_series", False):
        refresh_leads([instance.series_id])  # type: ignore[attr-defined]
