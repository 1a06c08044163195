"""A Komga-compatible REST API: the part Mihon's Komga extension and tracker, and other Komga clients, call.

Library = source, series = manga, book = chapter, page = page. Shapes follow
Komga's published OpenAPI description (tests validate every response
against it); progress is the same per-user read progress the web reader,
OPDS, the REST API and kosync share. Modules: `params` (query parameters
into filters, pure), `queries` (constant-query listings), `dto` (rows into
Komga's JSON, pure), `views`, `urls`.
"""
