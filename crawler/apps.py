from django.apps import AppConfig


class CrawlerConfig(AppConfig):
    name = "crawler"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from catalog import source_settings
        from catalog.signals import bookmark_created, download_alternates_enabled
        from crawler import bookmark_hook, download_policy, state_store
        from crawler.workers.handlers import CRAWL_KINDS
        from jobs import kinds
        from sources import browser
        from sources import kinds as source_kinds
        from sources.config import SECRET_HEADERS, SETTINGS_KEYS

        # The shared keys (selectors, politeness) checked by the row's kind, then each kind's own keys.
        source_settings.register(
            "crawler",
            SETTINGS_KEYS,
            source_kinds.validate_crawler_keys,
            secret_entries={"headers": SECRET_HEADERS},
        )
        for kind in source_kinds.KINDS.values():
            if kind.validate_own_keys is not None:
                source_settings.register(
                    f"crawler.{kind.name}", kind.own_keys, kind.validate_own_keys, secret_keys=kind.secret_keys
                )
        source_settings.register("crawler.download_policy", {download_policy.KEY}, download_policy.validate)
        kinds.register(*CRAWL_KINDS)

        # A successful restart of the crawl worker's Chromium clears the sticky session_expired flags.
        browser.after_restart(state_store.clear_expired_sessions)
        bookmark_created.connect(bookmark_hook.enqueue_bookmarked_chapters, dispatch_uid="crawler.bookmark_hook")
        download_alternates_enabled.connect(
            bookmark_hook.enqueue_series_alternates, dispatch_uid="crawler.enqueue_series_alternates"
        )
