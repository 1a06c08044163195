"""What every writer of job state does when its compare-and-set finds the lease gone (`jobs.queue`, `jobs.retry`,
`jobs.ownership`).

A finishing write matches `(id, lease_generation, state='running')` (the
named statements of `jobs/queries.sql`) and its row count is the answer: a
lease released, reclaimed or re-leased meanwhile carries an older
generation, so its late write matches nothing and is logged here instead of
clobbering the successor.
"""

from __future__ import annotations

import logging

from jobs.lease import Lease

# The queue's logger: a stale write is reported as the queue's, whichever writer tried it.
logger = logging.getLogger("jobs.queue")


def warn_stale(op: str, lease_: Lease) -> None:
    logger.warning(
        "%s: lease no longer current (generation mismatch: released, reclaimed or re-leased); "
        "skipping update job=%s generation=%s",
        op,
        lease_.id,
        lease_.lease_generation,
    )
