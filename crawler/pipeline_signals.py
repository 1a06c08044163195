"""In-process signals the crawl pipeline sends for apps built on it (the crawler never calls them itself)."""

from django.dispatch import Signal

# Sent with `chapter` once every page of a chapter is stored (the chapter is
# DONE). Analysis listens to queue the pages it has not analysed yet.
chapter_downloaded = Signal()
