"""`manage.py add_source NAME BASE_URL --preset madara [--set key=value ...]`: add an `html` source, dry run first.

The settings are validated, then one list page and one manga are fetched
and printed (titles, fields, chapters with dates, the first chapter's pages)
so the operator reads what a crawl would store before it runs. The row is
only kept when that dry run succeeds; otherwise nothing changes and the
error names what to fix.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils.text import slugify

from catalog.models import Source
from crawler.errors import CrawlerError
from crawler.sources import get_source
from crawler.sources.config import HtmlSourceConfig
from crawler.sources.presets import PRESETS

MAX_LISTED = 10


def parse_assignment(text: str) -> tuple[str, Any]:
    """`key=value`: the value is read as JSON when it parses (true, null, ["a"]), else taken as a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise CommandError(f"--set {text!r}: expected key=value")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


class Command(BaseCommand):
    help = "Add an html source from a preset (madara, mangathemesia, ...) and show a dry run of what it yields."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="display name; the source id is its slug unless --id is given")
        parser.add_argument("base_url", help="the site's root URL, e.g. https://example.com")
        parser.add_argument("--preset", choices=sorted(PRESETS), help="theme family the site runs")
        parser.add_argument("--id", dest="source_id", help="source id (a slug)")
        parser.add_argument(
            "--set",
            dest="assignments",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help='a settings key overriding the preset (JSON values: true, null, ["cdn.example.com"])',
        )
        parser.add_argument("--no-dry-run", action="store_true", help="create the row without fetching anything")

    def handle(self, *args: Any, **options: Any) -> None:
        source_id = options["source_id"] or slugify(options["name"])
        if not source_id:
            raise CommandError("the name gives no usable id; pass --id")
        if Source.objects.filter(id=source_id).exists():
            raise CommandError(f"source {source_id!r} already exists (edit it in the admin, or pick another --id)")
        settings: dict[str, Any] = {"preset": options["preset"]} if options["preset"] else {}
        settings.update(parse_assignment(a) for a in options["assignments"])
        try:
            HtmlSourceConfig.from_settings(settings, source_id=source_id)
        except CrawlerError as exc:
            raise CommandError(str(exc)) from exc
        row = Source(id=source_id, name=options["name"], kind=Source.Kind.HTML, base_url=options["base_url"])
        row.settings = settings
        try:
            row.full_clean()
        except Exception as exc:  # ValidationError: a bad URL or id
            raise CommandError(f"source {source_id!r}: {exc}") from exc
        with transaction.atomic():
            row.save()
            if not options["no_dry_run"]:
                try:
                    self._dry_run(row)
                except CrawlerError as exc:
                    transaction.set_rollback(True)
                    raise CommandError(f"dry run failed, source not added: {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(f"added source {source_id!r} ({row.base_url}) settings={json.dumps(settings)}")
        )

    def _dry_run(self, row: Source) -> None:
        from crawler.sources.browser import BrowserManager

        config = HtmlSourceConfig.from_settings(row.settings, source_id=row.id)
        browser = BrowserManager() if config.requires_browser else None
        source = get_source(row, browser=browser)
        out = self.stdout.write
        try:
            refs, has_next = source.list_page(1)
            out(f"list page 1: {len(refs)} manga(s){', more pages' if has_next else ', last page'}")
            for ref in refs[:MAX_LISTED]:
                out(f"  {ref.key:30} {ref.title}  <{ref.url}>")
            detail = source.manga_detail(refs[0])
            meta = detail.metadata
            out(f"manga {refs[0].key}:")
            for label, value in (
                ("title", meta.title),
                ("alt titles", " | ".join(meta.alt_titles)),
                ("authors", ", ".join(meta.authors)),
                ("status", meta.status),
                ("tags", ", ".join(meta.tags)),
                ("cover", detail.cover_url),
                ("description", meta.description[:120]),
            ):
                out(f"  {label:12} {value or '-'}")
            out(f"  chapters     {len(detail.chapters)}")
            for chapter in detail.chapters[:MAX_LISTED]:
                date = chapter.published_at.isoformat() if chapter.published_at else "no date"
                out(f"    {chapter.number!s:>6}  {chapter.title[:40]:40} {date}  key={chapter.key}")
            first = detail.chapters[0]
            pages = source.chapter_pages(first)
            out(f"chapter {first.number}: {len(pages)} page(s), first {pages[0]}")
        finally:
            source.close()
            if browser is not None:
                browser.close()
