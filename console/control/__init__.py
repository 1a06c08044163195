"""Operator control actions, shared by the admin API, the Django admin and the dashboard.

Subpackage `console.control`: `actions` (the actions themselves), `errors`
(what they raise when they cannot run), `backlog` (the read models of the
operator's lists), `downloads` (download policies), `sites` (adding and
editing sites), `source_changes`, `disk_floor`, `dry_run`, `analysis`
(force re-analysis), `operators` (who may watch and operate) and
`source_states`. Each writes its audit row through `crawler.audit`. It may
import the queue, the passes, the state store and analysis; the API
(`console.api`), the admin (`console.admin`), the dashboard and the operator
commands call it, the pipeline never does.
"""
