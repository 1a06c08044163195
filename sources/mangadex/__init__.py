"""MangaDex as a built-in source kind (`kind="mangadex"`): its public JSON API instead of selectors.

`settings` holds the source's keys and their checks, `records` the pure
readings of the API's answers (titles, chapters, page URLs, the at-home
report), `adapter` the Source the pipeline drives, `report` the MangaDex@Home
report sent after every at-home image download.
"""
