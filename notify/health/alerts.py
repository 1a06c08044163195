"""The health check: run the probes, keep what holds, and alert subscribed operators of what just started."""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from notify.health import probes
from notify.health.conditions import Condition, transitions
from notify.markdown import escape
from notify.models import Delivery, HealthCondition, NotificationTarget
from notify.sending import enqueue_deliveries
from notify.targets import may_receive_health_alerts

logger = logging.getLogger(__name__)


def _start(key: str, message: str, now: datetime) -> bool:
    """Record a condition; False when another checker recorded it first (then that one alerts, not this one)."""
    try:
        with transaction.atomic():
            HealthCondition.objects.create(key=key, message=message, since=now)
    except IntegrityError:
        return False
    return True


def check_health(now: datetime | None = None) -> list[Condition]:
    """One check: the conditions that started now (each alerted once), after forgetting those that cleared."""
    now = now or timezone.now()
    holding, failed = probes.run_all(now)
    held = set(HealthCondition.objects.values_list("key", flat=True))
    change = transitions(held, holding, failed)
    if change.cleared:
        HealthCondition.objects.filter(key__in=change.cleared).delete()
        logger.info("health conditions cleared: %s", ", ".join(change.cleared))
    started = [Condition(key, holding[key]) for key in change.started if _start(key, holding[key], now)]
    if started:
        alert(started)
    return started


def alert(conditions: list[Condition]) -> int:
    """Queue one alert per operator target listing `conditions`; how many were queued."""
    lines = [f"- {escape(c.message)}" for c in conditions]
    title = "Mangalord: " + (conditions[0].message if len(conditions) == 1 else f"{len(conditions)} source problems")
    deliveries = [
        Delivery(target=target, kind=Delivery.Kind.HEALTH, title=title[:250], body="\n".join(lines))
        for target in NotificationTarget.objects.filter(health_alerts=True).select_related("user")
        if may_receive_health_alerts(target.user)
    ]
    enqueue_deliveries(deliveries)
    logger.warning("health: %s", "; ".join(c.message for c in conditions))
    return len(deliveries)
