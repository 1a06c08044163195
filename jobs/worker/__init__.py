"""The worker: the lease loop (`loop.Worker`) and its collaborators.

`pool` runs jobs on long-lived threads, `outage` rides out a lost database
connection, `circuit` pauses leasing during an outage of what jobs talk to,
`outcomes` decides how a finished job is settled and `settle` writes it,
`runner` keeps each job's thread and deadline, `heartbeat` renews the held
leases, `listener` wakes the loop on NOTIFY, `signals` turns SIGTERM/SIGINT
into a stop, `cadence` how often
controls are reread, `hooks` what a role adds. Apps build a `Worker` for
their role from `WorkerConfig.for_role` (`crawler.workers.roles`,
`analysis.worker`).
"""
