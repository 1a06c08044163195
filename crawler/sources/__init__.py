"""Source adapters. `factory.get_source` builds the adapter a Source row asks for.

Subpackage `crawler.sources`: adapters (`demo`, `html`), their validated
settings (`config`), HTML parsing, the host allow-list, the HTTP client, the
shared Chromium (`browser`) and per-source politeness (`politeness`, `gate`,
`limiter`). It talks to the outside world and returns plain records; it may
import `crawler.errors`, `crawler.state_store`, `crawler.models` (the limiter's
rows) and `catalog`, never the passes, the workers or the controls.
"""
