"""Changing how a source is crawled: the one path every door takes, operator-checked and audited.

A source's `base_url`, `kind`, `enabled`, `name` and `settings` (its
selectors, rate limit, image hosts, download policy...) decide what the
crawler fetches and from where. The Django admin's change form and actions,
the Sources page, the admin API (`PATCH .../sources/<id>/`) and the
management commands all call `change_source`, so each change:

- needs the operator permission (`console.control.operators.can_operate`),
  whatever the door: a plain admin model permission such as
  `catalog.change_source` is not enough. `actor=None` is the machine's
  operator, a management command run on the server, as for every other
  control;
- is validated by the settings contract (`Source.full_clean`), and a NUL
  anywhere in the settings is refused before PostgreSQL would;
- queues or withdraws downloads when the `download` policy switches
  (`console.control.downloads.apply_switch`);
- keeps a secret setting (`catalog.source_settings`) the door showed masked
  and the person sent back unchanged, so editing another key never wipes the
  password or stores the mask in its place;
- writes one audit row, `change_source`, naming the door (`via`) and each
  changed field's value before and after (secrets masked).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from catalog import source_settings
from catalog.models import Source
from console.control.downloads import PolicySwitch, apply_switch
from console.control.errors import ControlError
from console.control.operators import OPERATE_CRAWLER, can_operate
from crawler import audit, download_policy

# The fields that decide what is crawled, and how; `id` names the row and never changes.
CRAWL_FIELDS = ("name", "kind", "base_url", "enabled", "settings")
# The doors, as the audit row names them.
DOORS = ("admin", "admin-action", "sources-page", "api", "cli")
ACTION = "change_source"


class NotAnOperator(ControlError):
    """The actor may not change how sources are crawled: they lack the operator permission."""


class SourceMissing(ControlError):
    pass


class ChangeRefused(ControlError, ValueError):
    """The change breaks the settings contract (or carries a NUL); the message names the source and the key."""


def require_operator(actor: Any, what: str) -> None:
    """Raise NotAnOperator unless `actor` operates (None: a management command, run by the machine's operator)."""
    if actor is not None and not can_operate(actor):
        raise NotAnOperator(f"{what} needs the {OPERATE_CRAWLER} permission (the Operators group)")


@dataclass(frozen=True)
class SourceChange:
    source: Source
    # field -> {"before": ..., "after": ...}, only the fields whose value changed
    changed: dict[str, dict[str, Any]] = field(default_factory=dict)
    switch: PolicySwitch | None = None

    def describe(self) -> str:
        """One line for the operator: what changed."""
        if not self.changed:
            return f"{self.source.id}: nothing changed"
        if self.switch is not None and self.switch.before != self.switch.after:
            return self.switch.describe()
        return f"{self.source.id}: changed {', '.join(self.changed)}"


def validation_message(exc: ValidationError, source_id: str) -> str:
    """A ValidationError as one line naming the source: `source 'x': base_url: Enter a valid URL.`."""
    fields = exc.message_dict.items() if hasattr(exc, "message_dict") else [("", exc.messages)]
    parts = []
    for name, msgs in fields:
        for msg in msgs:
            parts.append(msg if msg.startswith("source ") else f"source {source_id!r}: {name}: {msg}")
    return "; ".join(parts)


def refuse_nul(source_id: str, settings: Any) -> None:
    """PostgreSQL's jsonb cannot hold a NUL (`\\u0000`): refused here with a reason instead of failing there."""
    if "\\u0000" in json.dumps(settings):
        raise ChangeRefused(f"source {source_id!r}: settings: a value contains a NUL character (\\u0000); remove it")


def change_source(
    *,
    actor: Any,
    source_id: str,
    changes: dict[str, Any] | None = None,
    merge_settings: dict[str, Any] | None = None,
    via: str,
) -> SourceChange:
    """Apply `changes` (a subset of CRAWL_FIELDS) to the source, operator-checked, validated and audited.

    `merge_settings` sets some settings keys and keeps the others (read under
    the row's lock, so two doors switching different keys at once lose
    neither). Raises NotAnOperator, SourceMissing or ChangeRefused with
    nothing changed. A change that changes nothing writes no audit row.
    """
    changes = dict(changes or {})
    unknown = set(changes) - set(CRAWL_FIELDS)
    if unknown or via not in DOORS:
        raise ValueError(f"change_source: unknown field(s) {sorted(unknown)} or door {via!r}")
    require_operator(actor, f"changing source {source_id!r}")
    for settings in (changes.get("settings"), merge_settings):
        if settings is not None:
            refuse_nul(source_id, settings)
    with transaction.atomic():
        source = Source.objects.select_for_update().filter(id=source_id).first()
        if source is None:
            raise SourceMissing(f"source {source_id!r} does not exist")
        if "settings" in changes:
            changes["settings"] = source_settings.with_stored_secrets(changes["settings"], source.settings)
        if merge_settings:
            changes["settings"] = {**changes.get("settings", source.settings or {}), **merge_settings}
        policy_before = download_policy.policy_of(source)
        changed = {
            name: {"before": getattr(source, name), "after": value}
            for name, value in changes.items()
            if getattr(source, name) != value
        }
        if not changed:
            return SourceChange(source)
        for name, values in changed.items():
            setattr(source, name, values["after"])
        try:
            source.full_clean()
        except ValidationError as exc:
            raise ChangeRefused(validation_message(exc, source_id)) from exc
        source.save(update_fields=[*changed, "updated_at"])
        switch = apply_switch(source, policy_before, download_policy.policy_of(source))
        detail = {
            "via": via,
            "changed": _without_secrets(changed),
            "enqueue_job": switch.enqueue_job,
            "withdrawn": switch.withdrawn,
        }
        audit.record(actor, ACTION, scope="source", target_id=source.id, detail=detail)
    return SourceChange(source, changed, switch)


def _without_secrets(changed: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The changed fields for the audit row: settings before and after with their secrets masked.

    A secret that changed still shows as changed (the settings differ) without either value.
    """
    if "settings" not in changed:
        return changed
    settings = {side: source_settings.masked(value) for side, value in changed["settings"].items()}
    return {**changed, "settings": settings}


def set_download_policy(*, actor: Any, source_id: str, policy: str, via: str = "cli") -> PolicySwitch:
    """Store `policy` for the source, then queue or withdraw what the switch concerns (`change_source`).

    A bad policy or an unknown source raises before anything changes
    (SourceSettingsError / ControlError, each naming the source).
    """
    download_policy.check(source_id, policy)
    result = change_source(actor=actor, source_id=source_id, merge_settings={download_policy.KEY: policy}, via=via)
    return result.switch or PolicySwitch(source_id, policy, policy, 0)  # it already had this policy


def remove_source(*, actor: Any, source: Source, via: str) -> None:
    """Delete a source (its mangas' links and chapters go with it), operator-checked and audited."""
    require_operator(actor, f"removing source {source.id!r}")
    with transaction.atomic():
        settings = audit.without_secrets(source.settings)
        detail = {"via": via, "name": source.name, "base_url": source.base_url, "settings": settings}
        audit.record(actor, "remove_source", scope="source", target_id=source.id, detail=detail)
        source.delete()
