"""`catalog.inputs` in DRF's terms: the API's one body parser, and an integer field that reads ASCII digits only.

The parser is DRF's JSON, read no further than REQUEST_JSON_MAX_BYTES and
checked for depth first.

DRF's own JSONParser reads the whole stream (Django's upload limit does not
apply to it) and recurses once per nesting level, so a 100,000-deep array
was a RecursionError and a 500. This one reads at most the limit plus one
byte, answers 413 past it, and parses only what `catalog.inputs` let
through. It is every API view's parser (`DEFAULT_PARSER_CLASSES`), so no
form or multipart body reaches a view either.
"""

from __future__ import annotations

from typing import IO, Any

from django.conf import settings
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from catalog import inputs


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


class BoundedJSONParser(JSONParser):
    def parse(self, stream: IO[bytes], media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.REQUEST_JSON_MAX_BYTES
        raw = stream.read(limit + 1)
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        try:
            body: bytes | str = raw if encoding.lower().replace("-", "") == "utf8" else raw.decode(encoding)
            return inputs.loads_bounded(body)
        except inputs.JsonTooLarge as exc:
            raise PayloadTooLarge(str(exc)) from exc
        except (inputs.BadJson, UnicodeDecodeError, LookupError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc


class AsciiIntegerField(serializers.IntegerField):
    """DRF's IntegerField with `catalog.inputs.parse_bounded_int`'s rule for text: ASCII digits, within the bounds.

    DRF's own passes text to `int()`, which takes "٣" and "1_0"; JSON numbers are ints already and keep its checks.
    """

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, str):
            return super().to_internal_value(data)
        low = self.min_value if self.min_value is not None else -(2**63)
        high = self.max_value if self.max_value is not None else 2**63 - 1
        try:
            return inputs.parse_bounded_int(data.strip(), low=low, high=high)
        except inputs.BadInteger as exc:
            raise serializers.ValidationError(str(exc).capitalize() + ".", code="invalid") from exc
