"""The big-site benchmark's parts (`bench/big_site.py` runs them): the generated library and queue, the timed operations."""
