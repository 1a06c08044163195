"""Getting past JavaScript challenges: when a pass is made and by what.

`records` is what a pass yields (cookies and their User-Agent), `planning`
the decision over the stored state and the stores, `handler` an adapter's
side, `passers` the ways to pass (`browser_passer`: the worker's Chromium;
`solver`: a FlareSolverr endpoint). The database store every worker shares
is the crawler's (`crawler.clearance.rows`). Recognising a challenge and
waiting one out in a tab are transport work (`fetch.challenge`,
`fetch.browser_pass`).
"""
