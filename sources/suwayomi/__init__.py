"""The `suwayomi` source kind: one source of a Suwayomi-Server (any Mihon extension) crawled through our engine.

Suwayomi runs the Mihon extensions and answers a GraphQL API
(`schema.graphql`, recorded with its origin); this package speaks it:
`queries` holds every document we send, `answers` reads the replies into
typed records, `records` maps them onto the Source protocol's records,
`client` carries the requests through the source's guarded transport, and
`adapter` is the Source itself.
"""
