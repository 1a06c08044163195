"""A stand-in for MangaDex on 127.0.0.1: its API, cover host, MangaDex@Home node and report endpoint.

Built from MangaDex's published OpenAPI description, version 5.10.0
(/work/shared/mangadex/openapi.yaml, copied into `openapi.yaml` beside this
file with its origin in its header: the description MangaDex maintains in
gitlab.com/mangadex-pub/mangadex-api-docs, as of GitHub
tuananhlai/public-openapis mangadex.yaml at 644630971f57). What the
description leaves to the docs site's prose (api.mangadex.org/docs) follows
that prose: the rate limits and their 429 answer with
`X-RateLimit-Retry-After`, cover URLs `uploads/covers/{manga}/{file}`, the
at-home image URLs `{baseUrl}/data/{hash}/{file}` and the report POST.

`catalog` is what it serves, `server` the servers, `openapi` the check of
every exchange against the description (known quirks listed there).
"""
