"""The Sources page's "Add a Suwayomi source": a server's URL, its sources to pick from, the dry run, the row.

Three posts: "List its sources" (the server's `sources` query: name,
language, NSFW flag, latest listing), "Dry run" of the picked one (nothing
saved), and "Add source" (the same dry run, then the row, audited), each
through `console.control.sites` like the site form beside it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from catalog.models import Source
from console.control import sites
from console.control.errors import ControlError
from console.dashboard.source_forms import SuwayomiServerForm, SuwayomiSourceForm
from console.dashboard.sources import _render, operator_required
from sources.errors import CrawlerError
from sources.suwayomi.adapter import server_sources
from sources.suwayomi.config import settings_for

TEMPLATE = "console/source_add_suwayomi.html"
TITLE = "Add a Suwayomi source"


@operator_required
def source_add_suwayomi(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _render(request, TEMPLATE, TITLE, server_form=SuwayomiServerForm())
    step = request.POST.get("step")
    form: SuwayomiServerForm = (
        SuwayomiSourceForm(request.POST) if step == "confirm" else SuwayomiServerForm(request.POST)
    )
    if not form.is_valid():
        return _render(request, TEMPLATE, TITLE, status=400, server_form=form)
    context: dict[str, Any] = {"server_form": form}
    url = form.cleaned_data["server_url"]
    try:
        context["server_version"], context["server_sources"] = server_sources(url, settings=form.settings())
    except CrawlerError as exc:
        context["error"] = f"cannot list the sources of the Suwayomi-Server at {url}: {exc}"
        return _render(request, TEMPLATE, TITLE, status=400, **context)
    if step != "confirm":
        return _render(request, TEMPLATE, TITLE, **context)
    data = form.cleaned_data
    context["picked"] = data["source"]
    picked = [s for s in context["server_sources"] if s.id == data["source"]]
    given = {"suwayomi_source": data["source"], **form.settings()}
    settings = settings_for(picked[0], given) if picked else given
    try:
        row = sites.new_source(
            name=data["name"] or (picked[0].display_name if picked else data["source"]),
            base_url=url,
            settings=settings,
            source_id=data["source_id"] or None,
            kind=Source.Kind.SUWAYOMI,
        )
        if request.POST.get("action") != "add":
            context["dry_run"] = sites.preview(row)
            return _render(request, TEMPLATE, TITLE, **context)
        sites.add_site(actor=request.user, row=row, crawl_now=data["crawl_now"])
    except (sites.SiteRefused, ControlError) as exc:
        context["error"] = str(exc)
        return _render(request, TEMPLATE, TITLE, status=400, **context)
    except CrawlerError as exc:
        context["error"] = f"dry run failed, source not added: {exc}"
        return _render(request, TEMPLATE, TITLE, status=400, **context)
    if data["crawl_now"]:
        messages.success(request, f"Added {row.name} ({row.id}); its first crawl is queued.")
    else:
        messages.success(request, f"Added {row.name} ({row.id}). {sites.first_crawl_note(row.id)}")
    return redirect("crawler-sources")
