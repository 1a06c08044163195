"""The verify report page (`/admin/verify/`): the latest pass's problems, and the repairs as operator actions.

Staff see the report; running a pass and the repairs need the operate
permission, like every crawler control, and write an audit row. Deleting
orphan files takes a typed confirmation, as the command's prompt does.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from console.control.operators import can_operate
from crawler import audit
from jobs.queue import enqueue
from upkeep.models import VerifyFinding
from upkeep.report import latest_report
from upkeep.verify import repairs
from upkeep.verify.handlers import VerifyLibrary

SHOWN_PER_KIND = 50
CONFIRM_WORD = "delete"


@never_cache
@staff_member_required
def verify_report(request: HttpRequest) -> HttpResponse:
    report = latest_report()
    shown: dict[str, list[VerifyFinding]] = {}
    if report is not None:
        for kind, *_ in report.problems:
            rows = report.run.findings.filter(kind=kind, repaired_at=None).order_by("id")[:SHOWN_PER_KIND]
            shown[kind] = list(rows)
    context: dict[str, Any] = {
        **admin.site.each_context(request),
        "title": "Library verify",
        "report": report,
        "shown": shown,
        "shown_per_kind": SHOWN_PER_KIND,
        "can_operate": can_operate(request.user),
        "confirm_word": CONFIRM_WORD,
    }
    return render(request, "upkeep/verify.html", context)


@never_cache
@staff_member_required
@require_POST
def verify_action(request: HttpRequest, action: str) -> HttpResponse:
    if not can_operate(request.user):
        raise PermissionDenied("verify actions need the crawler.operate_crawler permission")
    report = latest_report()
    if action == "run":
        queued = enqueue(VerifyLibrary(full=request.POST.get("full") == "1")).inserted
        messages.info(
            request, "Verify pass queued for a crawl worker." if queued else "A verify pass is already queued."
        )
    elif report is None:
        messages.error(request, "No verify report yet: run a pass first.")
        return redirect("upkeep-verify")
    elif action == "requeue":
        done = repairs.requeue_damaged(report.run)
        messages.success(request, f"{done.chapters} chapters queued for download again.")
    elif action == "orphans":
        if request.POST.get("confirm", "").strip().lower() != CONFIRM_WORD:
            messages.error(request, f"Orphan files kept: type {CONFIRM_WORD!r} to confirm.")
            return redirect("upkeep-verify")
        done = repairs.delete_orphans(report.run, confirmed=True)
        messages.success(request, f"{done.files} orphan files deleted.")
    elif action == "exports":
        try:
            done = repairs.reexport_stale(report.run)
        except FileNotFoundError as exc:
            messages.error(request, str(exc))
            return redirect("upkeep-verify")
        messages.success(request, f"{done.chapters} chapters exported again.")
    else:
        return HttpResponse(f"unknown verify action {action!r}", status=404)
    audit.record(request.user, f"verify_{action}", scope="library", target_id=report.run.pk if report else "")
    return redirect("upkeep-verify")
