"""Operator control actions, shared by the admin API, the Django admin and the dashboard.

Subpackage `console.control`: `actions` (the actions themselves), `errors`
(what they raise when they cannot run), `audit` (the audit log, written only
from here), `backlog` (the read models of the operator's lists), `downloads`
(download policies), `sites` (adding and editing sites), `dry_run`,
`operators` (who may watch and operate) and `source_states`. It may import
the queue, the passes and the state store; the API (`console.api`), the
admin and the dashboard call it, the pipeline never does.
"""
