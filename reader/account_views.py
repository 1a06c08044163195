"""The account page: your API keys (create, name, scope, list with last use, revoke). A new key is shown once.

A key is `read` unless an operator asks for `operate` (`accounts.api_keys`);
the choice is offered to operators only. The page takes a browser session
only: a key never makes another key.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts import api_keys

LOGIN = "reader:login"


@login_required(login_url=LOGIN)
@require_http_methods(["GET", "HEAD", "POST"])
def account(request: HttpRequest) -> HttpResponse:
    new_key, error, status = "", "", 200
    if request.method == "POST":
        try:
            scope = request.POST.get("scope", api_keys.READ)
            _, new_key = api_keys.mint(request.user, request.POST.get("name", ""), scope)
        except (api_keys.BadKeyName, api_keys.BadKeyScope) as exc:
            error, status = str(exc), 400
    context = {
        "keys": api_keys.keys_of(request.user),
        "may_operate": api_keys.may_hold(request.user, api_keys.OPERATE),
        "new_key": new_key,
        "error": error,
        "base": request.build_absolute_uri("/").rstrip("/"),
    }
    response = render(request, "reader/account.html", context, status=status)
    response["Cache-Control"] = "no-store"  # the page may carry a key shown once
    return response


@login_required(login_url=LOGIN)
@require_POST
def revoke_key(request: HttpRequest, key_id: int) -> HttpResponse:
    if api_keys.revoke(request.user, key_id):
        messages.success(request, "Key revoked: apps using it are signed out.")
    else:
        messages.error(request, "You have no such key.")
    return redirect("reader:account")
