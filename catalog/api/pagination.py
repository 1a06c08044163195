"""Page-number pagination shared by the library and admin APIs (`?page=`, `?page_size=` 1..100).

Strict on purpose: a `page_size` that is not a number in range is a 400
naming the rule, not a silent fallback to the default.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 100

    def get_page_size(self, request: Any) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if not 1 <= size <= self.max_page_size:
            raise ValidationError({self.page_size_query_param: f"Must be an integer from 1 to {self.max_page_size}."})
        return size
