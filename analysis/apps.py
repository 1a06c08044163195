from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Plug analysis in: its job kind and download hook; its fields in the library API."""
        from analysis import receivers, web
        from analysis.handlers import ANALYSIS_KINDS
        from crawler.pipeline_signals import chapter_downloaded
        from jobs import kinds

        kinds.register(*ANALYSIS_KINDS)
        web.register()
        chapter_downloaded.connect(receivers.enqueue_chapter_analysis, dispatch_uid="analysis.chapter_downloaded")
