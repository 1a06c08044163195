"""The Sources page (`/admin/crawler/sources/`): each source's crawl state, add a site by URL, crawl now, settings.

Operators only (`crawler.operate_crawler`): others are sent to the admin
login, or refused when signed in. Views only read forms and call
`console.control` (sites, source_changes, source_states) and `sources.discover`;
a settings edit takes the path every door takes (`source_changes.change_source`);
adding a site is two posts: "Look at the site" (detect the theme, show the
dry run, store nothing) and "Add source" (the same dry run again, then the
row, audited).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from catalog.models import Source
from catalog.source_settings import masked
from console.control import actions, sites
from console.control.errors import ControlError
from console.control.operators import can_operate
from console.control.source_changes import change_source
from console.control.source_states import source_states
from console.dashboard.source_forms import SettingsForm, SiteDetailsForm, SiteUrlForm
from console.status.compose import downloads_paused
from sources.discover import SiteUnreadable, probe_site
from sources.errors import CrawlerError
from sources.kinds import kind_of

View = Callable[..., HttpResponse]


def operator_required(view: View) -> View:
    """Staff login first (the admin's redirect), then the operate permission (403 without it)."""

    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_operate(request.user):
            raise PermissionDenied("the Sources page needs the crawler.operate_crawler permission")
        return view(request, *args, **kwargs)

    return never_cache(staff_member_required(guarded))


def _render(request: HttpRequest, template: str, title: str, *, status: int = 200, **context: Any) -> HttpResponse:
    return render(request, template, {**admin.site.each_context(request), "title": title, **context}, status=status)


@operator_required
def source_list(request: HttpRequest) -> HttpResponse:
    states, paused = source_states(), downloads_paused()
    return _render(request, "console/sources.html", "Sources", states=states, url_form=SiteUrlForm(), paused=paused)


@operator_required
def source_add(request: HttpRequest) -> HttpResponse:
    """GET: the URL form. POST step=detect: probe + dry run. POST step=confirm: dry run again, then save."""
    if request.method != "POST":
        return _render(request, "console/source_add.html", "Add a site", url_form=SiteUrlForm())
    if request.POST.get("step") == "confirm":
        return _confirm(request)
    url_form = SiteUrlForm(request.POST)
    if not url_form.is_valid():  # the form says what is wrong; the answer says it is the request's fault
        return _render(request, "console/source_add.html", "Add a site", status=400, url_form=url_form)
    url = url_form.cleaned_data["url"]
    try:
        probe = probe_site(url)
    except SiteUnreadable as exc:  # a URL that does not parse, is refused, or answers no page: the operator's to fix
        return _render(
            request,
            "console/source_add.html",
            "Add a site",
            status=400,
            url_form=url_form,
            error=f"cannot read {url}: {exc}",
        )
    if not kind_of(probe.kind).selectors:
        return _api_site(request, url_form, url, probe)
    # What the probe found beyond the preset is the extra settings' starting point: the operator corrects it there.
    extra = json.dumps(probe.settings, ensure_ascii=False) if probe.settings else ""
    details = SiteDetailsForm(
        initial={
            "url": url,
            "base_url": probe.base_url,
            "name": probe.title,
            "preset": probe.detection.preset or "",
            "extra": extra,
        }
    )
    context = {"url_form": url_form, "details": details, "detection": probe.detection, "findings": probe.findings}
    context["detection_message"] = probe.detection.explain(probe.base_url)
    if probe.detection.preset is not None:
        context.update(_preview(probe.title, probe.base_url, probe.source_settings(), clearance=probe.clearance))
    return _render(request, "console/source_add.html", "Add a site", status=_status(context), **context)


def _api_site(request: HttpRequest, url_form: SiteUrlForm, url: str, probe: Any) -> HttpResponse:
    """MangaDex: no preset and no probe; the chapter languages are the operator's choice, so the dry run
    waits for them ("Dry run again")."""
    details = SiteDetailsForm(
        initial={
            "url": url,
            "base_url": probe.base_url,
            "name": probe.title,
            "kind": probe.kind,
            "extra": json.dumps({"translated_languages": ["en"]}),
        }
    )
    message = (
        f"{probe.base_url} is {probe.title}, read through its API (kind {probe.kind}). Set the chapter languages "
        "(translated_languages) and any other key of docs/sources.md#mangadex-settings, then run the dry run."
    )
    context = {"url_form": url_form, "details": details, "detection_message": message, "kind_detected": True}
    return _render(request, "console/source_add.html", "Add a site", **context)


def _status(context: dict[str, Any]) -> int:
    """400 when the page carries an error the operator must fix (a refused URL, a failed dry run), else 200."""
    return 400 if context.get("error") else 200


def _preview(
    name: str,
    base_url: str,
    settings: dict[str, Any],
    source_id: str | None = None,
    *,
    clearance: Any = None,
    kind: str = "html",
) -> dict[str, Any]:
    """The dry run of a row not saved yet, or the error that names what to fix.

    `clearance`: the probe's pass of the site's JavaScript challenge (by the solver: the web process runs no
    browser), so the dry run does not ask for another.
    """
    try:
        row = sites.new_source(name=name, base_url=base_url, settings=settings, source_id=source_id or None, kind=kind)
        return {"dry_run": sites.preview(row, clearance=clearance), "preview_id": row.id}
    except (sites.SiteRefused, CrawlerError) as exc:
        return {"error": str(exc)}


def _confirm(request: HttpRequest) -> HttpResponse:
    details = SiteDetailsForm(request.POST)
    context: dict[str, Any] = {"url_form": SiteUrlForm(initial={"url": request.POST.get("url", "")})}
    if not details.is_valid():
        return _render(request, "console/source_add.html", "Add a site", status=400, details=details, **context)
    data = details.cleaned_data
    if request.POST.get("action") == "preview":  # the operator changed the preset or keys: dry run again
        preview = _preview(data["name"], data["base_url"], details.settings(), data["source_id"], kind=data["kind"])
        status = _status(preview)
        return _render(
            request, "console/source_add.html", "Add a site", status=status, details=details, **context, **preview
        )
    try:
        row = sites.new_source(
            name=data["name"],
            base_url=data["base_url"],
            settings=details.settings(),
            source_id=data["source_id"],
            kind=data["kind"],
        )
        sites.add_site(actor=request.user, row=row, crawl_now=data["crawl_now"])
    except (sites.SiteRefused, ControlError) as exc:
        return _render(
            request, "console/source_add.html", "Add a site", status=400, details=details, error=str(exc), **context
        )
    except CrawlerError as exc:
        error = f"dry run failed, source not added: {exc}"
        return _render(
            request, "console/source_add.html", "Add a site", status=400, details=details, error=error, **context
        )
    if data["crawl_now"]:
        messages.success(request, f"Added {row.name} ({row.id}); its first crawl is queued.")
    else:
        messages.success(request, f"Added {row.name} ({row.id}). {sites.first_crawl_note(row.id)}")
    return redirect("crawler-sources")


@require_POST
@operator_required
def source_crawl_now(request: HttpRequest, source_id: str) -> HttpResponse:
    source = get_object_or_404(Source, id=source_id)
    try:
        result = actions.request_metadata_pass(actor=request.user, source_id=source.id)[0]
    except ControlError as exc:
        messages.error(request, str(exc))
    else:
        if result.skipped:
            messages.warning(request, f"A metadata pass of {source.id} is already queued or running.")
        else:
            messages.success(request, f"Metadata pass of {source.id} queued; a crawl worker starts it.")
    return redirect("crawler-sources")


@operator_required
def source_settings(request: HttpRequest, source_id: str) -> HttpResponse:
    source = get_object_or_404(Source, id=source_id)
    error = ""
    if request.method == "POST":
        form = SettingsForm(request.POST)
        if form.is_valid():
            try:
                change_source(
                    actor=request.user,
                    source_id=source.id,
                    changes={"settings": form.cleaned_data["settings"]},
                    via="sources-page",
                )
            except ControlError as exc:  # the contract's reason, or the permission lost since the page loaded
                error = str(exc)
            else:
                messages.success(request, f"Settings of {source.id} saved.")
                return redirect("crawler-sources")
    else:
        # Secrets shown masked; sent back unchanged, change_source keeps the stored ones.
        form = SettingsForm(initial={"settings": json.dumps(masked(source.settings), indent=2)})
    return _render(
        request,
        "console/source_settings.html",
        f"Settings of {source.name}",
        status=400 if error else 200,
        source=source,
        form=form,
        error=error,
    )
