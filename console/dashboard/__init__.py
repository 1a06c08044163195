"""The dashboard: what an operator watches and clicks, over the pipeline's status (`crawler.status`).

`views`/`urls` (the live dashboard page at `/admin/crawler/`), `stream` (the
SSE endpoint every open dashboard holds), `broadcaster` (one composer per
server process for all of them) and `listeners` (where it hears that
something moved), and the Sources page (`sources`, its forms in
`source_forms`). It may import `crawler.status`, `console.control`,
`accounts` and `jobs`; the pipeline and the workers never import it.
"""
