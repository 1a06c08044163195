"""The job engine: a persistent queue over `crawler_jobs`, the worker loop that runs it, and the kind registry.

- `models`: the job rows and worker status rows;
- `queue`: the only code that writes job state (enqueue, lease, renew, ack,
  release, reclaim, reap), every write a compare-and-set on the lease;
- `requeue`: dead-letter requeue; `wakeup`: LISTEN/NOTIFY wake-ups;
- `payloads` and `kinds`: the typed payload base and the registry each app
  fills from its `AppConfig.ready()` (kind, payload class, handler, role,
  timeout), so nothing here knows a kind by name;
- `worker`: the lease loop, its job threads, heartbeat, circuit breaker and
  outage retry.

It imports no other app of ours; the apps above it declare what it runs.
"""
