from django.apps import AppConfig


class CrawlerConfig(AppConfig):
    name = "crawler"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from catalog import source_settings
        from catalog.signals import bookmark_created
        from crawler import bookmark_hook, download_policy
        from crawler.sources.config import SECRET_HEADERS, SETTINGS_KEYS
        from crawler.sources.kind_settings import validate_crawler_settings
        from crawler.sources.mangadex import settings as mangadex_settings
        from crawler.sources.suwayomi import config as suwayomi_config
        from crawler.workers.handlers import CRAWL_KINDS
        from jobs import kinds

        source_settings.register(
            "crawler", SETTINGS_KEYS, validate_crawler_settings, secret_entries={"headers": SECRET_HEADERS}
        )
        source_settings.register("crawler.mangadex", mangadex_settings.KEYS, mangadex_settings.validate)
        source_settings.register(
            "crawler.suwayomi",
            suwayomi_config.SETTINGS_KEYS,
            suwayomi_config.validate_suwayomi_settings,
            secret_keys=suwayomi_config.SECRET_KEYS,
        )
        source_settings.register("crawler.download_policy", {download_policy.KEY}, download_policy.validate)
        kinds.register(*CRAWL_KINDS)

        bookmark_created.connect(bookmark_hook.enqueue_bookmarked_chapters, dispatch_uid="crawler.bookmark_hook")
