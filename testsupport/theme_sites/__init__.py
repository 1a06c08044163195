"""Fixture sites of the two WordPress manga theme families, served over real HTTP on 127.0.0.1.

`madara` and `mangathemesia` render the markup and endpoints the themes ship
(list archives, detail pages, Madara's ajax chapter endpoints, MangaThemesia's
`ts_reader.run` reader, lazy-load image attributes, both date forms, an image
host that checks the Referer), from one shared catalog (`catalog`), so tests
know exactly what a crawl must store. `fixtures` has the pytest fixtures.
"""
