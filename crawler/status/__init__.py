"""The pipeline's status: what each worker process is doing, as rows every reader composes.

`handle` (the in-memory `StatusHandle` each worker process holds; the
pipeline publishes into it), `phases` (what a worker is doing now),
`publish` (status rows and the debounced publisher). The payload every
reader shows is composed above, by the console (`console.status`); the
pipeline imports only `handle` and `phases`.
"""
