"""What the worker loop does with a finished job: a pure decision over the handler's outcome.

One table instead of an if-chain spread through the loop, so every kind of
failure is settled the same way by every loop and is tested without one:

| handler outcome                  | disposition | queue call                       |
|----------------------------------|-------------|----------------------------------|
| returned                         | DONE        | `ack_done` (batched)             |
| `SessionExpired` (login wall)    | PAUSE       | `release`, flag and pause source |
| `StorageFull`, or a write that   | HOLD        | `release`, pause page downloads  |
| found the disk full (ENOSPC)     |             | until there is room again        |
| `JobCancelled` (not by the loop) | RELEASE     | `release`                        |
| `SourceBusy` (others have it)    | RELEASE     | `release`                        |
| lost database connection         | RELEASE     | `release` (an outage of ours)    |
| `RetryLater` (Retry-After)       | DEFER       | `defer` until the given time     |
| `PermanentError` (deterministic: | DEAD        | `ack_dead` with the reason       |
| config, off-host URL, 404/410)   |             |                                  |
| anything else                    | RETRY       | `ack_failed` (backoff, or dead)  |
"""

from __future__ import annotations

import enum
import errno

from crawler.errors import JobCancelled, PermanentError, RetryLater, SessionExpired, SourceBusy, StorageFull
from crawler.workers.outage import is_connection_lost


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
    if isinstance(error, SessionExpired):
        return Disposition.PAUSE
    if isinstance(error, StorageFull) or (isinstance(error, OSError) and error.errno == errno.ENOSPC):
        return Disposition.HOLD
    if isinstance(error, (JobCancelled, SourceBusy)) or is_connection_lost(error):
        return Disposition.RELEASE
    if isinstance(error, RetryLater):
        return Disposition.DEFER
    if isinstance(error, PermanentError):
        return Disposition.DEAD
    return Disposition.RETRY
