"""A series' chapters on its admin page: for each chapter key, the copy readers are served and the alternates.

The operator sees which source serves what (a downloaded copy of the
preferred source first, catalog.series_books) without leaving the admin; the
REST view (`/api/v1/library/series/<id>/`) gives the same as JSON. Two
queries whatever the series' size; a long series shows its first chapters and
links to the REST view for the rest.
"""

from __future__ import annotations

from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from catalog.models import Chapter, Series
from catalog.series_books import chapter_union

SHOWN = 500


def _copy(chapter: Chapter) -> str:
    return f"{chapter.source_id} ({chapter.get_sync_state_display().lower()})"


def chapter_sources_table(series: Series) -> SafeString:
    """An HTML table: chapter key, the served copy's source and state, the alternates' sources and states."""
    if series.pk is None:
        return format_html("{}", "-")
    entries = chapter_union(series.pk)
    rest = reverse("catalog-api:series-detail", args=[series.pk])
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (entry.key.label(), _copy(entry.shown), ", ".join(_copy(c) for c in entry.alternates) or "-")
            for entry in entries[:SHOWN]
        ),
    )
    more = f"{len(entries) - SHOWN} more chapters: " if len(entries) > SHOWN else ""
    return format_html(
        '<table class="series-chapters"><thead><tr><th>Chapter</th><th>Served from</th><th>Alternates</th></tr>'
        '</thead><tbody>{}</tbody></table><p>{}<a href="{}">the series over the REST API</a></p>',
        rows,
        more,
        rest,
    )
