"""Outbound fetching: the one guard every connection passes, and the transports that obey it.

This package stands on Django alone (its settings: OUTBOUND_ALLOWED_NETWORKS);
it imports no other app of ours, so the crawler, and anything else that
fetches from the internet, builds on it and not the reverse.

- the guard: `addresses` (which addresses are refused), `outbound` (resolve
  once, check, connect to the checked address; the request deadline);
- how a request leaves: `egress` (the proxy and the trusted CAs, one rule for
  every transport);
- the transports: `pages` and `pinned` (httpx, for HTML pages), `page_body`
  (a page's body under a size cap), `curl_transfer` (libcurl, for images),
  `browser`, `tab` and `chromium` (a shared headless Chromium and where its
  binary is found);
- recognising a JavaScript challenge on the wire (`challenge`) and waiting
  one out in a tab (`browser_pass`). When to pass one and where the pass is
  kept is crawl policy: `crawler.clearance`.

Callers pass their limits in (page size, deadlines, timeouts) and translate
`fetch.errors` into their own error kinds.
"""
