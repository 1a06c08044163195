"""Control endpoints: run/reconcile passes, browser restart, session refresh, requeue.

Each view validates with an input serializer, calls one `console.control`
function with keyword arguments and renders its outcome; a pass request
whose every source already has one in flight (`Skipped`) is 409 Conflict.
"""

from __future__ import annotations

from typing import Any

from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from console.api import serializers as s
from console.api.base import ControlAPIView
from console.control import actions
from console.control.errors import AmbiguousSource, ControlError, InvalidSessionValue
from jobs.requeue import ConfirmationRequired

ERRORS = {400: s.ErrorSerializer, 401: s.ErrorSerializer, 403: s.ErrorSerializer, 409: s.ErrorSerializer}


def validated(serializer_class: type[Any], request: Request) -> dict[str, Any]:
    """The request body through its input serializer; a bad body raises a 400 naming each field."""
    data = serializer_class(data=request.data if request.data is not None else {})
    data.is_valid(raise_exception=True)
    return data.validated_data


def control_error(exc: ControlError) -> Response:
    bad_input = isinstance(exc, (AmbiguousSource, InvalidSessionValue))
    code = status.HTTP_400_BAD_REQUEST if bad_input else status.HTTP_409_CONFLICT
    return Response({"detail": str(exc)}, status=code)


class _PassView(ControlAPIView):
    """Enqueue a pass for the named source or every enabled one; 409 when all are already in flight."""

    action_name = ""
    request_pass: Any = None

    def post(self, request: Request) -> Response:
        data = validated(s.PassRequestInput, request)
        try:
            results = self.request_pass(actor=request.user, source_id=data.get("source"))
        except ControlError as exc:
            return control_error(exc)
        rendered = s.PassResultSerializer(results, many=True).data
        in_flight = [r.source_id for r in results if r.skipped]
        if len(in_flight) == len(results):
            detail = f"A {self.action_name} is already in flight for: {', '.join(in_flight)}."
            return Response({"detail": detail, "results": rendered}, status=status.HTTP_409_CONFLICT)
        return Response({"detail": f"{self.action_name} enqueued.", "results": rendered}, status=202)


_pass_schema = {
    "request": s.PassRequestInput,
    "responses": {202: s.PassResponseSerializer, 409: s.PassResponseSerializer, **ERRORS},
}


@extend_schema_view(post=extend_schema(operation_id="crawler_run", summary="Enqueue a metadata pass", **_pass_schema))
class RunView(_PassView):
    action_name = "metadata pass"
    request_pass = staticmethod(actions.request_metadata_pass)


@extend_schema_view(
    post=extend_schema(operation_id="crawler_reconcile", summary="Enqueue a reconcile pass", **_pass_schema)
)
class ReconcileView(_PassView):
    action_name = "reconcile pass"
    request_pass = staticmethod(actions.request_reconcile)


class RestartBrowserView(ControlAPIView):
    @extend_schema(
        operation_id="crawler_restart_browser",
        summary="Request a coordinated browser restart in every crawl worker",
        request=None,
        responses={202: s.RestartResponseSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        generation = actions.restart_browser(actor=request.user)
        return Response({"generation": generation}, status=status.HTTP_202_ACCEPTED)


# The session value must never reach an error report or a log line.
@method_decorator(sensitive_post_parameters("phpsessid"), name="dispatch")
class SessionView(ControlAPIView):
    @extend_schema(
        operation_id="crawler_session",
        summary="Refresh a source's PHPSESSID (stored server-side, never echoed)",
        request=s.SessionInput,
        responses={200: s.SessionResponseSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        data = validated(s.SessionInput, request)
        try:
            refreshed = actions.refresh_session(
                actor=request.user, phpsessid=data["phpsessid"], source_id=data.get("source")
            )
        except ControlError as exc:
            return control_error(exc)
        return Response({"source": refreshed.source_id, "stored": True})


class RequeueView(ControlAPIView):
    @extend_schema(
        operation_id="crawler_requeue",
        summary="Requeue dead jobs (scope all|manga|chapter|job; all needs confirm)",
        request=s.RequeueInput,
        responses={200: s.RequeueResponseSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        data = validated(s.RequeueInput, request)
        scope, target = data["scope"], data.get("target")
        try:
            requeued = actions.requeue(actor=request.user, scope=scope, target=target, confirm=data["confirm"])
        except ConfirmationRequired as exc:  # the serializer refuses first; the queue guards too
            return Response({"confirm": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"scope": scope, "target": target, "requeued": requeued})
