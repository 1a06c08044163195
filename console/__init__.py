"""The operator console, on top of the apps it watches and controls.

`dashboard` (the live page, its SSE stream and the Sources page), `api` (the
operator REST API under /api/v1/admin/crawler/), `control` (the actions every
face calls, each audited), `status` (the composed status every face shows),
`admin` (the console's actions and columns on each app's own admins) and the
operator commands (`add_source`, `download_policy`, `disk_floor`). Nothing
below it imports it.
"""
