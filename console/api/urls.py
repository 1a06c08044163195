"""Routes of the admin crawler API under /api/v1/admin/crawler/: status, job lists and operator controls.

Every operator route is listed here, analysis's force-analyze among them:
the console stands above the apps it controls, so it imports them, never the
other way round.
"""

from django.urls import path

from console.api.analysis import ForceAnalyzeView
from console.api.backlog import BacklogView
from console.api.control import (
    ReconcileView,
    RequeueView,
    RestartBrowserView,
    RunView,
    SessionView,
)
from console.api.dead_jobs import DeadJobsView, HistoryView
from console.api.series_sources import SeriesSourcesView
from console.api.sources import SourceView
from console.api.status import StatusView
from console.api.storage import DiskFloorView
from console.dashboard.stream import status_stream

app_name = "crawler-api"

urlpatterns = [
    path("", StatusView.as_view(), name="status"),
    path("stream/", status_stream, name="crawler-status-stream"),
    path("run/", RunView.as_view(), name="run"),
    path("reconcile/", ReconcileView.as_view(), name="reconcile"),
    path("restart-browser/", RestartBrowserView.as_view(), name="restart-browser"),
    path("session/", SessionView.as_view(), name="session"),
    path("requeue/", RequeueView.as_view(), name="requeue"),
    path("dead-jobs/", DeadJobsView.as_view(), name="dead-jobs"),
    path("history/", HistoryView.as_view(), name="history"),
    path("backlog/", BacklogView.as_view(), name="backlog"),
    path("disk-floor/", DiskFloorView.as_view(), name="disk-floor"),
    path("sources/<slug:source_id>/", SourceView.as_view(), name="source"),
    path("series-sources/", SeriesSourcesView.as_view(), name="series-sources"),
    path("force-analyze/", ForceAnalyzeView.as_view(), name="force-analyze"),
]
