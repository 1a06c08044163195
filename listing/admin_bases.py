"""Admin building blocks every app's admin stands on: big-table changelists, read-only admins, extension points.

Each app registers its own models' admins once, in its own `admin.py`; an app
above adds what it owns (actions, columns, searches, an editor) through
`ExtensibleAdmin.extend` from its `AppConfig.ready()`, never by unregistering
and re-registering. What an operator sees then does not depend on which app
Django loads first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from django.contrib import admin
from django.contrib.admin import helpers
from django.contrib.admin.utils import quote
from django.contrib.admin.views.main import ChangeList
from django.db.models import Q
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from listing.paginators import CappedCountPaginator

# A changelist counts its rows up to this many: past it the count is a lower bound.
ADMIN_COUNT_CAP = 10_000


class CappedAdminPaginator(CappedCountPaginator):
    """Changelists of big tables (1.5 million chapters, millions of jobs) count at most ADMIN_COUNT_CAP rows per load.

    With `show_full_result_count = False` on the admin, a page load reads the
    page and at most the cap's worth of index entries, never every row.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cap = ADMIN_COUNT_CAP


# Stands for a row's primary key in a change URL reversed once per page.
_ANY_PK = "0"


class OneReverseChangeList(ChangeList):
    """Each row's change link from one reversed URL: `reverse` per row was the biggest cost of a 100-row page."""

    def url_for_result(self, result: Any) -> str:
        if not hasattr(self, "_change_url"):
            opts = self.opts
            route = f"admin:{opts.app_label}_{opts.model_name}_change"
            self._change_url = reverse(route, args=(_ANY_PK,), current_app=self.model_admin.admin_site.name)
        head, _, tail = self._change_url.rpartition(f"/{_ANY_PK}/")
        return f"{head}/{quote(result.pk)}/{tail}"


class BigTableAdmin(admin.ModelAdmin):
    """Changelists of tables with millions of rows: a capped count and rows that cost no template or URL lookup each."""

    paginator = CappedAdminPaginator
    show_full_result_count = False
    list_per_page = 50

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return OneReverseChangeList

    # Django renders this through the form widget templates, once per row; the same markup, formatted directly.
    @admin.display(description=mark_safe('<input type="checkbox" id="action-toggle">'))
    def action_checkbox(self, obj: Any) -> SafeString:
        return format_html(
            '<input type="checkbox" name="{}" value="{}" class="action-select" aria-label="Select this object for an '
            'action - {}">',
            helpers.ACTION_CHECKBOX_NAME,
            str(obj.pk),
            obj,
        )


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows the admin shows and no one changes through it, whatever their model permissions say."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# What an extension adds: a Django action function, a column (a callable of the row), a search (a Q for a term).
Action = Callable[..., Any]
Column = Callable[[Any], Any]
Search = Callable[[str], Q]
PermissionCheck = Callable[[HttpRequest], bool]


class ExtensibleAdmin(admin.ModelAdmin):
    """An admin that apps above extend instead of replacing: actions, columns, searches and action permissions.

    A subclass lists its own actions in `own_actions`; `actions` is those and
    then the extensions', in the order they were added. An action declared
    with `permissions=["operate"]` is offered only where `extend` registered a
    `has_operate_permission` check. Extensions are read per request, so the
    order in which apps are set up does not matter.
    """

    own_actions: ClassVar[Sequence[str | Action]] = ()
    # Each subclass gets lists of its own (__init_subclass__): extending one admin never extends another.
    extra_actions: ClassVar[list[Action]] = []
    extra_columns: ClassVar[list[tuple[str | None, Column]]] = []
    extra_searches: ClassVar[list[Search]] = []
    permission_checks: ClassVar[dict[str, PermissionCheck]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.extra_actions, cls.extra_columns, cls.extra_searches, cls.permission_checks = [], [], [], {}

    @classmethod
    def extend(
        cls,
        *,
        actions: Iterable[Action] = (),
        columns: Iterable[tuple[str | None, Column]] = (),
        searches: Iterable[Search] = (),
        permissions: dict[str, PermissionCheck] | None = None,
        search_help_text: str | None = None,
    ) -> None:
        """Add actions, columns (after the named column, or last when None), searches, permission checks.

        Idempotent: `ready()` may run twice (tests reloading apps), and an
        extension already there is not added again.
        """
        _add_new(cls.extra_actions, actions)
        _add_new(cls.extra_columns, columns)
        _add_new(cls.extra_searches, searches)
        for name, check in (permissions or {}).items():
            cls.permission_checks[f"has_{name}_permission"] = check
        if search_help_text is not None:
            cls.search_help_text = search_help_text

    @property
    def actions(self) -> tuple[str | Action, ...]:  # type: ignore[override]
        return (*self.own_actions, *self.extra_actions)

    def __getattr__(self, name: str) -> Any:
        # Django asks for `has_<name>_permission` of an action declared with `permissions=[name]`.
        check = type(self).permission_checks.get(name)
        if check is None:
            raise AttributeError(name)
        return check

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        columns = list(super().get_list_display(request))
        for after, column in self.extra_columns:
            columns.insert(columns.index(after) + 1 if after in columns else len(columns), column)
        return columns

    def extra_search_q(self, term: str) -> Q | None:
        """The extensions' matches for a search term, OR-ed; None when no extension searches."""
        matches = [search(term) for search in self.extra_searches]
        if not matches:
            return None
        combined = matches[0]
        for match in matches[1:]:
            combined |= match
        return combined


def _add_new(into: list[Any], items: Iterable[Any]) -> None:
    for item in items:
        if item not in into:
            into.append(item)
