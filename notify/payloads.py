"""The notify job payload: it names a `Delivery` row only, so no job row ever holds a notification URL's secret."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import ClassVar

from jobs.payloads import Payload


@dataclass(frozen=True)
class NotifySend(Payload):
    """Send one delivery (a digest, a test message, a health alert) to its target through Apprise."""

    kind: ClassVar[str] = "notify_send"
    delivery_id: uuid.UUID

    def dedup_key(self) -> str:
        return f"{self.kind}:{self.delivery_id}"
