"""The crawl pipeline: one set of functions for every caller (handlers, the metadata pass, the demo).

Owns the metadata pass and its stop rules, `process_manga_ref`, chapter sync,
chapter content download and the reconcile set-diff. May import `catalog`,
`jobs.queue`, `sources`, the engine's worker status (`jobs.worker.status`: handle and phases),
`crawler.state_store`
and `sources.errors`; never the worker loop or the operator controls.
"""
