"""The worker processes: the shared lease loop, what each role leases, job handlers, the circuit breaker.

`loop.Worker` is what `crawl_worker` and `analyze_worker` run. Handlers decode
a payload and call into `crawler.passes`; other apps register theirs through
`handlers.register_handlers` from their `AppConfig.ready()`. May import every
other crawler subpackage; nothing outside `crawler.workers` imports the loop
except management commands and benchmarks.
"""
