"""The worker: the lease loop (`loop.Worker`) and its collaborators.

`runner` keeps each job's thread, cancel event and deadline on the threads of
`pool`; `outcomes` decides how a finished job is settled and `settle` writes
it (with the `circuit` breaker that pauses leasing during an outage of what
jobs talk to); `heartbeat` renews the held leases; `listener` wakes the loop
on NOTIFY; `outage` rides out a lost database connection; `signals` turns
SIGTERM/SIGINT into a stop; `cadence` says how often controls are reread and
`hooks` what a role adds; `status` the process's live status row. Apps build a `Worker` for their role from
`WorkerConfig.for_role` (`crawler.workers.roles`, `analysis.worker`).
"""
