"""Source adapters. `factory.get_source` builds the adapter a Source row asks for.

Subpackage `crawler.sources`: adapters (`demo`, `html`), their validated
settings (`config`, `presets`, `themes`), HTML parsing (`parsing`,
`selectors`, `dates`, `statuses`), a new site's probe (`discover`), the host
allow-list (`hosts`), a source's requests (`http`: its cookies, politeness
gate and challenges over `fetch`'s transports) and the crawl worker's
Chromium (`browser`, over `fetch.browser`). Politeness is `crawler.politeness`,
challenge passes `crawler.clearance`. It returns plain records; it may import
`crawler.errors`, `crawler.state_store`, `crawler.models`, `fetch` and
`catalog`, never the passes, the workers or the controls.
"""
