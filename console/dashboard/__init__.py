"""The dashboard: what an operator watches and clicks, over the composed status (`console.status`).

`views`/`urls` (the live dashboard page at `/admin/crawler/`), `stream` (the
SSE endpoint every open dashboard holds), `broadcaster` (one composer per
server process for all of them, one busy period of it a `run`) and
`listeners` (where it hears that something moved), and the Sources page
(`sources`, its forms in `source_forms`). It may import `console.status`,
`console.control`, the crawler, `accounts` and `jobs`; nothing below the
console imports it.
"""
