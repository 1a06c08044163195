"""A worker process's live status: what it is doing, mirrored into its `WorkerStatus` row for every reader.

`handle` (the in-memory `StatusHandle` each worker process holds; handlers
publish into it), `phases` (what a worker is doing now), `publish` (the
debounced publisher of the row, and `PublishedStatus`, the role hooks of a
worker that keeps one) and `notify` (the "status changed" signal dashboards
listen for). Composing rows into what the dashboard shows is the console's.
"""
