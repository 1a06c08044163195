"""Enforcing a source's request limits across every worker on every host.

The limits themselves and the gate an adapter's requests pass are the
adapters' (`sources.politeness`: `rules`, `gate`); here `limiter` keeps the
shared state in the source's rows and `slots` shares a process's held slots
and tokens between its job threads. It may import `sources` and
`crawler.models`, never the passes, the workers or the controls.
"""
