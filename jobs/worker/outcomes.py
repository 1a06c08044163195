"""What the worker loop does with a finished job: a pure decision over the handler's outcome.

One table instead of an if-chain spread through the loop, so every kind of
failure is settled the same way by every loop and is tested without one:

| handler outcome                  | disposition | queue call                       |
|----------------------------------|-------------|----------------------------------|
| returned                         | DONE        | `ack_done` (batched)             |
| `Paused` (a login wall)          | PAUSE       | `release`, the role's `on_paused`|
| `Held` (free disk under its      | HOLD        | `release`, the role's `on_held`  |
| floor), a write that found the   |             | (it holds back the kinds that    |
| disk full (ENOSPC)               |             | need the room)                   |
| `JobCancelled` (not by the loop) | RELEASE     | `release`                        |
| `Busy` (taken by others now)     | RELEASE     | `release`                        |
| lost database connection         | RELEASE     | `release` (an outage of ours)    |
| `RetryLater` (Retry-After)       | DEFER       | `defer` until the given time     |
| `PermanentError` (deterministic: | DEAD        | `ack_dead` with the reason       |
| config, off-host URL, 404/410)   |             |                                  |
| anything else                    | RETRY       | `ack_failed` (backoff, or dead)  |
"""

from __future__ import annotations

import enum
import errno

from jobs.errors import Busy, Held, JobCancelled, Paused, PermanentError, RetryLater
from jobs.worker.outage import is_connection_lost


class Disposition(enum.Enum):
    DONE = "done"
    PAUSE = "pause"
    HOLD = "hold"
    RELEASE = "release"
    DEFER = "defer"
    DEAD = "dead"
    RETRY = "retry"


def disposition(error: BaseException | None) -> Disposition:
    """How to settle a job whose handler finished with `error` (None: it returned)."""
    if error is None:
        return Disposition.DONE
    if isinstance(error, Paused):
        return Disposition.PAUSE
    if isinstance(error, Held) or (isinstance(error, OSError) and error.errno == errno.ENOSPC):
        return Disposition.HOLD
    if isinstance(error, (JobCancelled, Busy)) or is_connection_lost(error):
        return Disposition.RELEASE
    if isinstance(error, RetryLater):
        return Disposition.DEFER
    if isinstance(error, PermanentError):
        return Disposition.DEAD
    return Disposition.RETRY
