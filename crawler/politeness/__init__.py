"""How fast and how many at once a source may be asked, shared by every worker on every host.

`rules` is the pure arithmetic (token bucket, concurrency, Retry-After
cooldowns); `limiter` keeps its state in the source's rows; `slots` shares a
process's held slots and tokens between its job threads; `gate` is what an
adapter's requests pass through. It may import `crawler.errors` and
`crawler.models`, never the adapters, the passes, the workers or the controls.
"""
