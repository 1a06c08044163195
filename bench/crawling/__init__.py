"""The crawl benchmark's parts (`bench/crawl.py` runs them): the static theme site, nginx and aria2c,
/proc readings, our commands and their checks, the profiler.

Every module here imports only the standard library, Pillow, numpy, psycopg and psutil at its top,
so the site generator's test imports it without the benchmark's tools installed.
"""
