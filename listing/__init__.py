"""Building blocks for listing tables of a million rows, on Django alone, under every app.

`paginators` counts no further than a page needs (a `COUNT(*)` over a big table is the slow part of a list);
`admin_bases` holds the admin list bases every app's `admin.py` builds on (big table, read-only, extensible), so
the engine's Job admin and the library's admins share them without one app importing another.
"""
