from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Plug analysis in: its job kind, control route and download hook; its fields in the library API."""
        from django.urls import path

        from analysis import receivers
        from analysis.api import ForceAnalyzeView
        from analysis.handlers import ANALYSIS_KINDS
        from analysis.serializers import register_library_fields
        from crawler.api import routes
        from crawler.pipeline_signals import chapter_downloaded
        from jobs import kinds

        kinds.register(*ANALYSIS_KINDS)
        register_library_fields()
        routes.register(path("force-analyze/", ForceAnalyzeView.as_view(), name="force-analyze"))
        chapter_downloaded.connect(receivers.enqueue_chapter_analysis, dispatch_uid="analysis.chapter_downloaded")
