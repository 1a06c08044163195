"""How the API schema (drf-spectacular) describes the policy's header credentials: a token, HTTP Basic, an API key."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object


class HeaderCredentialsScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.drf.HeaderCredentialsAuthentication"
    match_subclasses = True
    name = ["tokenAuth", "basicAuth", "apiKeyAuth"]

    def get_security_requirement(self, auto_schema: Any) -> list[dict[str, list[Any]]]:
        return [{"tokenAuth": []}, {"basicAuth": []}, {"apiKeyAuth": []}]  # any one

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, Any]]:
        return [
            build_bearer_security_scheme_object(header_name="Authorization", token_prefix="Token"),
            {
                "type": "http",
                "scheme": "basic",
                "description": "Your user name, and your password or one of your API keys.",
            },
            {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "One of your API keys."},
        ]
