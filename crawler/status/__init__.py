"""The pipeline's status as every reader shows it: `compose` (the payload) and `source_stats` (per-source figures).

What each worker process is doing is the engine's (`jobs.worker.status`: the
handle, its phases and the publisher of the `WorkerStatus` rows); this
package composes those rows with the crawler's own state. It may import
`jobs`, `crawler.state_store`, `crawler.control.backlog` and `catalog`. The
dashboard that shows it live is `crawler.dashboard`.
"""
