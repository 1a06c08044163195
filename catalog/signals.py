"""Signals the catalog sends for the apps built on it to act on (it never calls them itself)."""

from django.dispatch import Signal

# Sent inside the bookmark's transaction with `bookmark` and `chapters`: the
# not-yet-downloaded chapters the reader now wants, ascending by number. The
# crawler's receiver queues their downloads, so a failure there rolls the
# bookmark back too (no bookmark without its downloads).
bookmark_created = Signal()

# Sent by `export_cbz` after it wrote the library, with `directory` and `written` (files written or moved):
# media servers reading that folder (Komga, Kavita) are asked to rescan it by the app that knows them.
library_exported = Signal()

# Sent with `chapter` once every page of it is stored: the chapter is readable. Senders use `send_robust`, so a
# listener's failure (notify recording it for the next digest) is logged and never fails the download.
chapter_ready = Signal()

# Sent with `series` (and `actor`, `via`) when an operator asks a series to download every source's copy of its
# chapters (catalog.series.set_download_alternates): the crawler queues the copies now wanted.
download_alternates_enabled = Signal()
