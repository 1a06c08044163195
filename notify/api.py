"""Your notification URLs over the REST API, under /api/v1/notifications/: your own only, their URLs masked.

GET lists them; POST adds one (checked by Apprise; 400 naming what to fix, nothing stored); DELETE
/notifications/<id>/ removes one; POST /notifications/<id>/test/ queues a test message. Another user's id is a 404.
"""

from __future__ import annotations

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.drf import API_AUTHENTICATION
from catalog.api.inputs import BoundedJSONParser
from notify import service
from notify.targets import MAX_URL_LENGTH, BadTarget


class TargetSerializer(serializers.Serializer):
    id = serializers.UUIDField(read_only=True)
    label = serializers.CharField(read_only=True)
    scheme = serializers.CharField(read_only=True)
    masked_url = serializers.CharField(read_only=True, help_text="The URL with its secrets masked by Apprise.")
    digests = serializers.BooleanField(read_only=True)
    health_alerts = serializers.BooleanField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)


class NewTargetSerializer(serializers.Serializer):
    url = serializers.CharField(
        max_length=MAX_URL_LENGTH, trim_whitespace=False, help_text="An Apprise URL, such as ntfys://ntfy.sh/topic."
    )
    label = serializers.CharField(max_length=service.MAX_LABEL_LENGTH, required=False, default="", allow_blank=True)
    digests = serializers.BooleanField(required=False, default=True)
    health_alerts = serializers.BooleanField(required=False, default=False, help_text="Operators only.")


class TargetAccess:
    authentication_classes = API_AUTHENTICATION
    permission_classes = (IsAuthenticated,)
    parser_classes = (BoundedJSONParser,)


class TargetList(TargetAccess, APIView):
    @extend_schema(summary="Your notification URLs", responses=TargetSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(TargetSerializer(service.targets_of(request.user), many=True).data)

    @extend_schema(summary="Add a notification URL", request=NewTargetSerializer, responses={201: TargetSerializer})
    def post(self, request: Request) -> Response:
        given = NewTargetSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            target = service.add_target(request.user, **given.validated_data)
        except BadTarget as exc:
            return Response({"url": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(TargetSerializer(target).data, status=status.HTTP_201_CREATED)


class TargetDetail(TargetAccess, APIView):
    @extend_schema(summary="Remove a notification URL", responses={204: None})
    def delete(self, request: Request, target_id: uuid.UUID) -> Response:
        if not service.remove_target(request.user, target_id):
            return Response({"detail": "You have no such notification URL."}, status=status.HTTP_404_NOT_FOUND)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TargetTest(TargetAccess, APIView):
    @extend_schema(summary="Send a test message to a notification URL", request=None, responses={202: None})
    def post(self, request: Request, target_id: uuid.UUID) -> Response:
        if not service.send_test(request.user, target_id):
            return Response({"detail": "You have no such notification URL."}, status=status.HTTP_404_NOT_FOUND)
        return Response({"detail": "Test queued."}, status=status.HTTP_202_ACCEPTED)
