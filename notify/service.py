"""A user's notification targets: add, list (masked), remove, send a test. The account page and the API call these."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from notify import targets
from notify.models import Delivery, NotificationTarget
from notify.sending import enqueue_deliveries
from notify.targets import BadTarget

MAX_LABEL_LENGTH = 100

TEST_TITLE = "Mangalord test notification"
TEST_BODY = "This URL works: Mangalord will send your chapter digests here."


@dataclass(frozen=True)
class TargetView:
    """A target as it may be shown: its URL masked, never whole."""

    id: uuid.UUID
    label: str
    scheme: str
    masked_url: str
    digests: bool
    health_alerts: bool
    created_at: datetime


def view_of(target: NotificationTarget) -> TargetView:
    return TargetView(
        id=target.id,
        label=target.label,
        scheme=target.scheme,
        masked_url=targets.masked(target.url),
        digests=target.digests,
        health_alerts=target.health_alerts,
        created_at=target.created_at,
    )


def targets_of(user: Any) -> list[TargetView]:
    return [view_of(t) for t in NotificationTarget.objects.filter(user=user)]


def add_target(
    user: Any, *, url: str, label: str = "", digests: bool = True, health_alerts: bool = False
) -> TargetView:
    """Check `url` with Apprise and the outbound rule, then store it; BadTarget saying what to fix, nothing stored."""
    label = label.strip()
    if len(label) > MAX_LABEL_LENGTH:
        raise BadTarget(f"a label is at most {MAX_LABEL_LENGTH} characters")
    if health_alerts and not targets.may_receive_health_alerts(user):
        raise BadTarget("source health alerts are for operators only")
    if not (digests or health_alerts):
        raise BadTarget("choose what to send here: chapter digests, health alerts or both")
    if NotificationTarget.objects.filter(user=user).count() >= targets.max_targets():
        raise BadTarget(f"you have {targets.max_targets()} notification URLs already (NOTIFY_MAX_TARGETS_PER_USER)")
    url = targets.validated(url)
    target = NotificationTarget.objects.create(
        user=user,
        url=url,
        scheme=targets.scheme_of(url),
        label=label,
        digests=digests,
        health_alerts=health_alerts,
    )
    return view_of(target)


def remove_target(user: Any, target_id: uuid.UUID) -> bool:
    """Delete one of `user`'s targets (and its unsent deliveries); False when they have no such target."""
    deleted, _ = NotificationTarget.objects.filter(user=user, id=target_id).delete()
    return bool(deleted)


def send_test(user: Any, target_id: uuid.UUID) -> bool:
    """Queue a test message to one of `user`'s targets; False when they have no such target."""
    target = NotificationTarget.objects.filter(user=user, id=target_id).first()
    if target is None:
        return False
    enqueue_deliveries([Delivery(target=target, kind=Delivery.Kind.TEST, title=TEST_TITLE, body=TEST_BODY)])
    return True
