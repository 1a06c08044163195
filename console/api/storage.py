"""The disk floor at run time over the API: what `manage.py disk_floor` does, for operators (audited).

Running crawl workers reread the floor with their controls, so a lower one
resumes paused page downloads within a second and a higher one pauses them
(crawler.passes.disk_guard); the status API's `storage` says what they see.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from console.api import serializers as s
from console.api.base import ControlAPIView
from console.api.control import ERRORS, validated
from console.control.disk_floor import set_disk_floor
from crawler.passes.disk_guard import storage_paused


class DiskFloorView(ControlAPIView):
    @extend_schema(
        operation_id="crawler_disk_floor",
        summary="Set (or, with null, clear) the free disk space page downloads keep, without a restart",
        request=s.DiskFloorInput,
        responses={200: s.DiskFloorSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        data = validated(s.DiskFloorInput, request)
        floor, set_by = set_disk_floor(actor=request.user, floor=data["floor"])
        return Response({"floor": str(floor), "set_by": set_by, "downloads_paused": storage_paused()})
