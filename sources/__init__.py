"""Source adapters: how each kind of site is read, one module or package a kind, and the table of kinds.

Adapters (`demo`, `html`, `mangadex/`, `suwayomi/`) and the kinds table
(`kinds`: how a row of each kind is configured and validated), their
validated settings (`config`, `presets`, `themes`), HTML parsing (`parsing`,
`selectors`, `dates`, `statuses`), a new site's probe (`discover`), the host
allow-list (`hosts`), a source's requests (`http`: its cookies, politeness
gate and challenges over `fetch`'s transports), the crawl worker's Chromium
(`browser`, over `fetch.browser`), what they raise (`errors`), the request
limits and the gate (`politeness`) and challenge passes (`clearance`). It
returns plain records; it may import `fetch`, `catalog` and `jobs` (its
errors), never the crawler: the crawler builds an adapter on its own
database-backed limiter and stores (`crawler.factory`).
"""
