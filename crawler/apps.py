from django.apps import AppConfig


class CrawlerConfig(AppConfig):
    name = "crawler"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from catalog.signals import bookmark_created
        from crawler import receivers

        bookmark_created.connect(receivers.enqueue_bookmarked_chapters, dispatch_uid="crawler.bookmark_hook")
