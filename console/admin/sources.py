"""Sources in the admin, changed only by operators and only through `console.control.source_changes`.

The change form, the add form, deletion and the policy actions are offered
to operators only (the operator permission, not the model permissions,
decides): staff holding just `catalog.change_source` see the list read-only,
since a `base_url` or a `download` policy decides what the server fetches
(and queues). Every save goes through `change_source` / `add_site` /
`remove_source`, which check the operator permission again and write the
audit row every other door writes. Secret settings are shown masked in the
form; sent back unchanged, `change_source` keeps the stored value.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest

from catalog import source_settings
from catalog.models import Source
from console.control import downloads, source_changes
from console.control.operators import can_operate
from crawler import download_policy


class SourceForm(forms.ModelForm):
    class Meta:
        model = Source
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:  # the stored secrets never reach the page; a masked one sent back is kept
            self.initial["settings"] = source_settings.masked(self.instance.settings)

    def clean_settings(self) -> Any:
        """A NUL is refused as a form error: PostgreSQL's jsonb would refuse it with a 500."""
        settings = self.cleaned_data.get("settings")
        try:
            source_changes.refuse_nul(self.instance.pk or self.data.get("id", ""), settings)
        except source_changes.ChangeRefused as exc:
            raise forms.ValidationError(str(exc)) from exc
        return settings


def _report(modeladmin: admin.ModelAdmin, request: HttpRequest, switch: downloads.PolicySwitch) -> None:
    modeladmin.message_user(request, switch.describe() + ".", messages.SUCCESS)


class OperatorSourceEditor:
    """`catalog.admin.SourceAdmin`'s editor: operators only, every change audited."""

    form = SourceForm

    def may_edit(self, request: HttpRequest) -> bool:
        return can_operate(request.user)

    def readonly_fields(self, obj: Source | None) -> tuple[str, ...]:
        return ("id",) if obj is not None else ()

    def save(self, modeladmin: admin.ModelAdmin, request: HttpRequest, source: Source, form: Any, change: bool) -> None:
        """Through the operator-checked, audited path; a policy edited in the settings switches downloads."""
        # Imported here: the admin is loaded in every process Django sets up, the dry run's fetching stack is not.
        from console.control import sites

        try:
            if not change:
                sites.add_site(actor=request.user, row=source, check=False, via="admin")
                return
            changes = {name: getattr(source, name) for name in form.changed_data if name in source_changes.CRAWL_FIELDS}
            result = source_changes.change_source(actor=request.user, source_id=source.pk, changes=changes, via="admin")
        except source_changes.NotAnOperator as exc:  # lost the permission since the form was shown
            raise PermissionDenied(str(exc)) from exc
        if result.switch is not None and result.switch.before != result.switch.after:
            _report(modeladmin, request, result.switch)

    def delete(self, request: HttpRequest, source: Source) -> None:
        source_changes.remove_source(actor=request.user, source=source, via="admin")


@admin.display(description="download")
def download(source: Source) -> str:
    return (source.settings or {}).get(download_policy.KEY, download_policy.ALL)


def _switch(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Source], policy: str) -> None:
    for source_id in queryset.values_list("id", flat=True):
        switch = source_changes.set_download_policy(
            actor=request.user, source_id=source_id, policy=policy, via="admin-action"
        )
        _report(modeladmin, request, switch)


@admin.action(description="Download pages of every manga", permissions=["operate"])
def download_all(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Source]) -> None:
    _switch(modeladmin, request, queryset, download_policy.ALL)


@admin.action(description="Download pages of followed (bookmarked) mangas only", permissions=["operate"])
def download_followed(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Source]) -> None:
    _switch(modeladmin, request, queryset, download_policy.FOLLOWED)
