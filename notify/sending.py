"""Sending one delivery through Apprise, and queueing deliveries as `notify_send` jobs.

Nothing here runs inside a crawl: deliveries are rows, sending is a job of the `notify` worker role, so a slow or
dead notification service costs the crawl nothing. A failed send raises `DeliveryFailed` and the queue retries it
with its jittered backoff (`jobs.retry`) up to NOTIFY_SEND_MAX_ATTEMPTS, then dead-letters it. Every message that
reaches a log or a dead letter names the URL's scheme and the target's id, never the URL: it holds the secret.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import apprise
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from jobs import queue
from jobs.errors import PermanentError
from notify.models import Delivery, NotificationTarget
from notify.payloads import NotifySend
from notify.targets import BadTarget, UnresolvedHost, check_destination

logger = logging.getLogger(__name__)

# Apprise's own warnings may quote parts of the URL (a host, a token): every piece of the URL this long or longer is
# blanked out of them before they reach a dead letter.
_SECRET_PIECE_MIN = 3
_PIECES = re.compile(r"[A-Za-z0-9_\-.~%+]+")


class DeliveryFailed(Exception):
    """Apprise could not deliver: retried with backoff, dead-lettered after the last attempt."""


def where(target: NotificationTarget) -> str:
    """How logs and dead letters name a target: its scheme, id and label, never its URL."""
    label = f" ({target.label})" if target.label else ""
    return f"{target.scheme}:// target {target.id}{label}"


def redact(text: str, url: str) -> str:
    """`text` with every piece of `url` but its scheme blanked out (Apprise's log lines may quote them)."""
    _, _, rest = url.partition("://")
    for piece in sorted(set(_PIECES.findall(rest)), key=len, reverse=True):
        if len(piece) >= _SECRET_PIECE_MIN:
            text = text.replace(piece, "****")
    return text


def deliver(delivery: Delivery) -> None:
    """Send `delivery` once; DeliveryFailed (retry) or PermanentError (a URL we must not use) when it did not go."""
    target = delivery.target
    try:
        check_destination(target.url)
    except UnresolvedHost as exc:  # a DNS hiccup: the queue's backoff tries again
        raise DeliveryFailed(f"{where(target)}: {exc}") from exc
    except BadTarget as exc:  # refused by the outbound rule or no longer usable: retrying cannot help
        raise PermanentError(f"{where(target)}: {exc}") from exc
    sender = apprise.Apprise()
    sender.add(target.url)
    result = sender.notify(
        body=delivery.body,
        title=delivery.title,
        body_format=apprise.NotifyFormat.MARKDOWN,
        notify_type=apprise.NotifyType.WARNING if delivery.kind == Delivery.Kind.HEALTH else apprise.NotifyType.INFO,
    )
    if not result:
        # The call's own log (Apprise 2's result carries it), not the process-wide logger: the notify worker sends on
        # several threads, and one send's dead letter must never quote another's.
        said = [entry.message for entry in result.logs() if entry.level in ("WARNING", "ERROR", "CRITICAL")]
        detail = redact(said[-1], target.url) if said else "no reason given"
        raise DeliveryFailed(f"{where(target)}: Apprise could not deliver the {delivery.kind}: {detail}")
    Delivery.objects.filter(id=delivery.id).update(sent_at=timezone.now())
    logger.info("sent the %s %s to %s", delivery.kind, delivery.id, where(target))


def enqueue_deliveries(deliveries: Sequence[Delivery]) -> None:
    """Store `deliveries` and queue one `notify_send` job each, together (no job without its row, nor the reverse)."""
    if not deliveries:
        return
    with transaction.atomic():
        Delivery.objects.bulk_create(deliveries)
        queue.enqueue_many(
            [NotifySend(delivery_id=d.id) for d in deliveries], max_attempts=settings.NOTIFY_SEND_MAX_ATTEMPTS
        )
