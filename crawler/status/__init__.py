"""The pipeline's status: what each worker process is doing, as rows every reader composes.

`handle` (the in-memory `StatusHandle` each worker process holds; the
pipeline publishes into it), `phases` (what a worker is doing now),
`publish` (status rows and the debounced publisher), `compose` (the payload
every reader shows) and `source_stats` (per-source figures). It may import
`jobs` (counts), `crawler.state_store`, `console.control.backlog` and
`catalog`; the pipeline imports only `handle` and `phases`. The dashboard
that shows it live is `console.dashboard`.
"""
