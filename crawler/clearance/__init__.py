"""Getting past JavaScript challenges: when a pass is made, by what, and where it is kept for every worker.

`records` is what a pass yields (cookies and their User-Agent), `planning`
the decision over the stored state and the stores, `rows` the database store,
`handler` an adapter's side, `passers` the ways to pass (`browser_passer`:
the worker's Chromium; `solver`: a FlareSolverr endpoint). Recognising a
challenge and waiting one out in a tab are transport work (`fetch.challenge`,
`fetch.browser_pass`).
"""
