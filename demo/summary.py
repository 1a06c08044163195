"""What the demo tells a newcomer: what was stored, how far the analysis is, and where to look."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, Sum
from rich.console import Console

from catalog.models import Chapter, Manga, Page
from jobs.models import Job, JobState

ANALYZE_KIND = "analyze_page"


def library_summary() -> dict[str, Any]:
    """What the library holds now: mangas, covers, chapters, pages, bytes, dead jobs."""
    return {
        "mangas": Manga.objects.count(),
        "covers": Manga.objects.filter(cover_state=Manga.CoverState.STORED).count(),
        "chapters": Chapter.objects.filter(dropped_at__isnull=True).count(),
        "chapters_done": Chapter.objects.filter(sync_state=Chapter.SyncState.DONE).count(),
        "pages": Page.objects.count(),
        "bytes": Page.objects.aggregate(n=Sum("bytes"))["n"] or 0,
        "dead_jobs": Job.objects.filter(state=JobState.DEAD).count(),
    }


def analysis_summary() -> dict[str, int]:
    """How far page analysis is: pages, analyses finished (done or failed), NSFW, OCR text, jobs still to run."""
    from analysis.models import PageAnalysis

    counts = PageAnalysis.objects.aggregate(
        done=Count("id", filter=Q(state=PageAnalysis.State.DONE)),
        failed=Count("id", filter=Q(state=PageAnalysis.State.FAILED)),
        nsfw=Count("id", filter=Q(nsfw=True)),
        with_text=Count("id", filter=~Q(ocr_text="")),
    )
    waiting = Job.objects.filter(kind=ANALYZE_KIND, state__in=(JobState.PENDING, JobState.RUNNING)).count()
    return {"pages": Page.objects.count(), **counts, "finished": counts["done"] + counts["failed"], "waiting": waiting}


def analysis_line(a: dict[str, int], heading: str = "Analysis") -> str:
    return (
        f"{heading}: {a['done']} pages analysed, {a['failed']} failed, {a['nsfw']} flagged NSFW, "
        f"{a['with_text']} with OCR text"
    )


def print_stored(console: Console, summary: dict[str, Any]) -> None:
    console.rule("[bold]Stored")
    console.print(
        f"{summary['mangas']} mangas ({summary['covers']} covers), {summary['chapters']} chapters "
        f"({summary['chapters_done']} downloaded), {summary['pages']} pages, "
        f"{summary['bytes'] / 1_000_000:.1f} MB"
    )
    if summary["dead_jobs"]:
        console.print(f"[yellow]{summary['dead_jobs']} job(s) dead-lettered: see the dashboard")


def print_where_to_look(console: Console, base: str, credentials: str) -> None:
    console.rule("[bold]Where to look")
    console.print(f"Reader     {base}/   {credentials}", soft_wrap=True)
    console.print(f"OPDS       {base}/opds/   {credentials} (HTTP Basic)", soft_wrap=True)
    console.print(f"Admin      {base}/admin/   {credentials}", soft_wrap=True)
    console.print(f"Dashboard  {base}/admin/crawler/")
    console.print(f"API        {base}/api/v1/mangas/")
    console.print(f"API docs   {base}/api/docs/")
