"""`POST /api/v1/auth/token/`: a username and password for an API token, under the lockout and a throttle."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle, ScopedRateThrottle
from rest_framework.views import APIView

from accounts import credentials, lockout


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})


class TokenResponseSerializer(serializers.Serializer):
    token = serializers.CharField()


class TokenView(APIView):
    """Exchange a username and password for an API token (`Authorization: Token <key>`).

    The password is checked like every other login (`accounts.credentials`):
    a locked account or address is refused with 429 and `Retry-After`, the
    right password too; on top of that, each address may call this endpoint
    `API_THROTTLE_LOGIN` times.
    """

    authentication_classes = ()
    permission_classes = (AllowAny,)
    # The body is read by the project's one parser (DEFAULT_PARSER_CLASSES): JSON within a size and a depth limit.
    throttle_classes = (ScopedRateThrottle, AnonRateThrottle)
    throttle_scope = "login"

    @extend_schema(
        operation_id="auth_token",
        summary="Obtain an API token",
        request=TokenRequestSerializer,
        responses={200: TokenResponseSerializer},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        body = TokenRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            user = credentials.verify_password(
                request._request, body.validated_data["username"], body.validated_data["password"]
            )
        except lockout.LockedOut as exc:
            raise Throttled(wait=exc.retry_after_secs, detail=str(exc)) from exc
        except credentials.InvalidCredentials as exc:
            raise serializers.ValidationError(
                {"non_field_errors": ["Unable to log in with provided credentials."]}, code="authorization"
            ) from exc
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})
