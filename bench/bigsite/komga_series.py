"""The Komga API's series views on a big site whose every manga is one series of `size.copies` sources' copies.

What Mihon calls: the series list (first and deep page, a search, a
mirror source's library, the read-status filter), a series of three copies
(details, books, the tracker) and a book of a copy that is not the one shown.
Each list page holds only merged series, the worst case for their counts.
"""

from __future__ import annotations

from typing import Any

from bigsite.operations import COMMON_WORD, SEARCH, Operation, _get
from bigsite.seed import SEARCHED_MANGA, Size, row_id

PAGE = 20  # Komga's default page size, what Mihon asks


def operations(client: Any, size: Size) -> list[Operation]:
    from catalog.models import Chapter

    series_id = row_id("manga", SEARCHED_MANGA)
    alternate = Chapter.objects.filter(manga__series_id=series_id).exclude(manga_id=series_id).first()
    deep = max(1, int(size.mangas * 0.9) // PAGE)
    series = f"/api/v1/series/{series_id}"
    found = [
        Operation("Komga series first page", _get(client, "/api/v1/series", page=0, deleted="false")),
        Operation("Komga series deep page (90 %)", _get(client, "/api/v1/series", page=deep)),
        Operation("Komga series search", _get(client, "/api/v1/series", search=SEARCH)),
        Operation("Komga series search, common word", _get(client, "/api/v1/series", search=COMMON_WORD)),
        Operation("Komga series, a mirror's library", _get(client, "/api/v1/series", library_id="mirror-1")),
        Operation(
            "Komga series, unread or in progress",
            _get(client, "/api/v1/series", read_status="UNREAD,IN_PROGRESS"),
        ),
        Operation(f"Komga series detail, {size.copies} sources", _get(client, series)),
        Operation(f"Komga books, {size.copies} sources' series", _get(client, f"{series}/books", unpaged="true")),
        Operation(
            f"Komga tracker, {size.copies} sources' series",
            _get(client, f"/api/v2/series/{series_id}/read-progress/tachiyomi"),
        ),
    ]
    if alternate is not None:
        found.append(Operation("Komga book of a copy not shown", _get(client, f"/api/v1/books/{alternate.id}")))
    return found
