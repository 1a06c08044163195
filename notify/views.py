"""The account page's notifications section: add a notification URL, see them masked, send a test, remove one.

A browser session only, like the API keys beside it (`reader.account_views`); the URL's secret is never shown again
after it was entered.
"""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from notify import service, targets
from notify.targets import BadTarget

LOGIN = "reader:login"


@login_required(login_url=LOGIN)
@require_http_methods(["GET", "HEAD", "POST"])
def notifications(request: HttpRequest) -> HttpResponse:
    error, status = "", 200
    if request.method == "POST":
        try:
            service.add_target(
                request.user,
                url=request.POST.get("url", ""),
                label=request.POST.get("label", ""),
                digests=request.POST.get("digests") == "on",
                health_alerts=request.POST.get("health_alerts") == "on",
            )
        except BadTarget as exc:
            error, status = str(exc), 400
        else:
            messages.success(request, "Notification URL added. Send a test to check it.")
            return redirect("notify:account")
    context = {
        "targets": service.targets_of(request.user),
        "may_get_health_alerts": targets.may_receive_health_alerts(request.user),
        "error": error,
    }
    response = render(request, "notify/account.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response


@login_required(login_url=LOGIN)
@require_POST
def send_test(request: HttpRequest, target_id: uuid.UUID) -> HttpResponse:
    if service.send_test(request.user, target_id):
        messages.success(request, "Test queued: it arrives within seconds while the notify worker runs.")
    else:
        messages.error(request, "You have no such notification URL.")
    return redirect("notify:account")


@login_required(login_url=LOGIN)
@require_POST
def remove(request: HttpRequest, target_id: uuid.UUID) -> HttpResponse:
    if service.remove_target(request.user, target_id):
        messages.success(request, "Notification URL removed.")
    else:
        messages.error(request, "You have no such notification URL.")
    return redirect("notify:account")
