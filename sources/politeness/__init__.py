"""How fast and how many at once a source may be asked: the limits and the gate an adapter's requests pass.

`rules` is the pure arithmetic (token bucket, concurrency, Retry-After
cooldowns); `gate` is what an adapter's requests pass through. Enforcing the
limits across every worker on every host through the database is the
crawler's (`crawler.politeness.limiter`), which stands on these.
"""
