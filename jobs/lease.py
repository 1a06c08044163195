"""A lease: what a worker holds while it runs a job, and what every finishing write is guarded on.

Its identity is `(id, lease_generation)`: the queue bumps the generation on
every lease, release and reclaim, so a late write from a lease that was given
back or re-leased matches no row. A record of its own, beneath the queue and
the guards both use it with.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from jobs.payloads import Payload


@dataclass(frozen=True)
class Lease:
    id: uuid.UUID
    payload: Payload
    attempts: int
    max_attempts: int
    lease_generation: int

    @property
    def kind(self) -> str:
        return self.payload.kind
