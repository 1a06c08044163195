"""The status every operator face shows: `compose` (worker rows, queue counts, flags) and `source_stats`.

Composed from the rows the workers publish (`jobs.worker.status`) and the
queue's counts, so the admin API and the dashboard's stream never disagree.
"""
