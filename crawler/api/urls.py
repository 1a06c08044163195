"""Routes of the admin crawler API under /api/v1/admin/crawler/: status, job lists and operator controls.

Apps built on the crawler add their own control routes here through
`crawler.api.routes.register` from their `AppConfig.ready()` (analysis adds
force-analyze), so the crawler never imports them.
"""

from django.urls import path

from crawler.api import routes
from crawler.api.backlog import BacklogView
from crawler.api.control import (
    ReconcileView,
    RequeueView,
    RestartBrowserView,
    RunView,
    SessionView,
)
from crawler.api.dead_jobs import DeadJobsView, HistoryView
from crawler.api.sources import SourceView
from crawler.api.status import StatusView
from crawler.api.storage import DiskFloorView
from crawler.dashboard.stream import status_stream

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
    *routes.registered(),
]
