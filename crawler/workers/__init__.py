"""The crawl worker role: its job handlers (`handlers`) and its hooks and builder on the engine (`roles`).

Handlers decode a payload and call into `crawler.passes`; the loop itself is
`jobs.worker.loop`. Nothing outside `crawler.workers` imports it except the
app config, management commands and benchmarks.
"""
