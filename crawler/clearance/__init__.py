"""Where challenge passes are kept for every worker: the database store (`rows`).

When a pass is made and by what is the adapters' (`sources.clearance`).
"""
