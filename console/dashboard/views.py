"""The live crawler dashboard page (`/admin/crawler/`): a template inside the admin look, driven by plain JS.

The page itself carries no data: `console/static/console/dashboard.js` reads the
status stream and the admin API, whose URLs it gets from `data-` attributes
here so the routes are named in one place.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie

from console.control.operators import can_operate
from console.status.series_sources import series_sources
from upkeep.report import latest_report

API_ROUTES = (
    "status",
    "crawler-status-stream",
    "run",
    "reconcile",
    "restart-browser",
    "session",
    "requeue",
    "dead-jobs",
    "backlog",
)


def api_urls() -> dict[str, str]:
    """Route name (with `_` for `-`, as templates need) -> path of every admin API endpoint the page calls."""
    return {name.replace("-", "_"): reverse(f"crawler-api:{name}") for name in API_ROUTES}


@never_cache
@ensure_csrf_cookie  # the page's POSTs send the csrftoken cookie back as X-CSRFToken
@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    context = {
        **admin.site.each_context(request),
        "title": "Crawler",
        "api_urls": api_urls(),
        "login_url": f"{reverse('admin:login')}?next={request.path}",
        # Read-only staff see the same live page without the controls (the API refuses them anyway).
        "can_operate": can_operate(request.user),
        # The library verify pass's latest report (upkeep): its problems, and a link to the repairs.
        "verify": latest_report(),
        # Series with several sources: which source served their chapters, and the failovers (memoised).
        "series_sources": series_sources(),
    }
    return render(request, "console/dashboard.html", context)
