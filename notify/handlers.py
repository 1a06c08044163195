"""The `notify_send` job handler, registered for the `notify` worker role from `NotifyConfig.ready()`."""

from __future__ import annotations

import logging
from typing import Any

from jobs.kinds import Kind
from notify.models import Delivery
from notify.payloads import NotifySend
from notify.sending import deliver

logger = logging.getLogger(__name__)

ROLE = "notify"


def handle_notify_send(payload: NotifySend, ctx: Any) -> None:
    delivery = Delivery.objects.select_related("target").filter(id=payload.delivery_id).first()
    if delivery is None:  # its target was removed meanwhile: nobody to tell
        logger.info("notify_send: delivery %s is gone (target removed); nothing to send", payload.delivery_id)
        return
    if delivery.sent_at is not None:  # a retry after a send whose ack was lost: never twice
        return
    deliver(delivery)


NOTIFY_KINDS: tuple[Kind, ...] = (Kind(NotifySend, handle_notify_send, role=ROLE, timeout_secs=120),)
