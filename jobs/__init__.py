"""The job engine: a persistent queue over `crawler_jobs`, the worker loop that runs it, and the kind registry.

- `models`: the job rows and worker status rows;
- `queries.sql` (read by `queries`): every statement of the queue, written
  once, whole and named, with its SQLite variant beside it;
- `queue`, `ownership`, `retry`, `housekeeping`: the only code that writes job
  state (enqueue, lease, renew, ack, release, reclaim, reap), every write a
  compare-and-set on the `lease` (`guards` logs a stale one); `counts`: the
  figures the dashboard reads;
- `requeue`: dead-letter requeue; `wakeup`: LISTEN/NOTIFY wake-ups;
- `payloads` and `kinds`: the typed payload base and the registry each app
  fills from its `AppConfig.ready()` (kind, payload class, handler, role,
  timeout), so nothing here knows a kind by name;
- `worker`: the lease loop, its job threads, heartbeat, circuit breaker and
  outage retry; `worker.status`: each worker process's live status row.

It imports no other app of ours; the apps above it declare what it runs.
"""
