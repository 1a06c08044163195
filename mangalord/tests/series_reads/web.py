"""The web app's part of the two-site series journey: one card per real series, the union on a series page, and
the reader's switcher to the other site's copy."""

from __future__ import annotations

import re

from django.test import Client

from catalog.models import Chapter, MangaSource

SERIES = ["Hikari no Ou", "King of Light", "Restart", "Revenge", "Revenge", "Sōsō no Frieren", "The Tide"]


def _page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def check_web(client: Client) -> None:
    """`client` is signed in: the library shows each of the 7 series once, The Tide's page lists chapters 1 to 4
    (alpha lists 1-3, beta 2-4), and a chapter both sites list offers the other site's copy."""
    grid = re.search(r'<ul class="grid" id="library-grid">(.*?)</ul>', _page(client, "/"), re.S)
    assert grid, "no library grid"
    assert sorted(re.findall(r'<span class="title">([^<]*)</span>', grid.group(1))) == SERIES

    tide = MangaSource.objects.select_related("manga").get(source_id="alpha", manga__title="The Tide").manga
    beta_copy = MangaSource.objects.select_related("manga").get(source_id="beta", manga__title="The Tide").manga
    redirect = client.get(f"/mangas/{beta_copy.pk}/")
    assert redirect.status_code == 302 and redirect["Location"] == f"/mangas/{tide.pk}/"
    page = _page(client, f"/mangas/{tide.pk}/")
    rows = re.findall(r'<li id="chapter-([0-9a-f-]+)"', page)
    numbers = {str(pk): int(n) for pk, n in Chapter.objects.filter(pk__in=rows).values_list("pk", "number")}
    assert [numbers[row] for row in rows] == [1, 2, 3, 4]
    sources = re.search(r'<p class="meta" id="manga-sources">(.*?)</p>', page, re.S)
    assert sources and "(preferred)" in sources.group(1) and sources.group(1).count("<a ") == 2

    both = Chapter.objects.filter(manga__series_id=tide.series_id, number=2, sync_state=Chapter.SyncState.DONE)
    chapter = both.get()  # downloaded once, from one site
    reader = _page(client, f"/read/{chapter.pk}/")
    switcher = re.search(r'<p class="copies" id="copies">(.*?)</p>', reader, re.S)
    assert switcher and "Also from" in switcher.group(1), "no switcher on a chapter both sites list"
    other = "beta" if chapter.source_id == "alpha" else "alpha"
    assert f'data-source="{other}"' in switcher.group(1)
