"""`manage.py add_source [NAME] URL [--preset P | --suwayomi [SOURCE]] [--set key=value ...] [--crawl-now]`: add a source.

`https://mangadex.org` adds a MangaDex source (kind mangadex, read through its
API); any other site is an html source. Without `--preset` the site is probed (sources.discover): its base
URL (an install under a sub-path included), theme, manga path, language and
numeric date order are found and printed, and become the settings; a site
matching no theme is refused with the presets to pick from, unless `--set`
keys configure it by hand. `--set` corrects anything the probe found. The settings
are validated, then one list page and one manga are fetched and printed
(titles, fields, chapters with dates, the first chapter's pages) so the
operator reads what a crawl would store before it runs. The row is only kept
when that dry run succeeds; otherwise nothing changes and the error names
what to fix. The last line says when the first crawl starts, or
`--crawl-now` enqueues it.

With `--suwayomi`, URL is a Suwayomi-Server and the source one of its
sources: `--suwayomi` alone lists them (id, language, NSFW flag), `--suwayomi
ID-OR-NAME` adds that one (kind suwayomi; credentials and the language as
`--set suwayomi_username=... suwayomi_password=... suwayomi_lang=en`).
"""

from __future__ import annotations

import json
from contextlib import closing
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from console.control import sites
from crawler import audit
from sources.discover import SiteProbe, SiteUnreadable, probe_site
from sources.errors import CrawlerError
from sources.kinds import kind_of
from sources.presets import PRESETS
from sources.suwayomi import adapter as suwayomi_adapter
from sources.suwayomi import config as suwayomi_config
from sources.suwayomi.config import KIND as SUWAYOMI
from sources.suwayomi.failures import pick_source


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
    help = (
        "Add a source: MangaDex by its address, an html site whose theme is detected (or --preset), or a "
        "Suwayomi-Server's source (--suwayomi); then show a dry run of what it yields."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "name_and_url",
            nargs="+",
            metavar="[NAME] URL",
            help="the site's URL, e.g. https://example.com, optionally after a display name "
            "(default: the home page's title); the source id is the name's slug unless --id is given",
        )
        parser.add_argument("--preset", choices=sorted(PRESETS), help="theme family the site runs (default: detect)")
        parser.add_argument(
            "--suwayomi",
            nargs="?",
            const="",
            metavar="SOURCE",
            help="URL is a Suwayomi-Server: add its source SOURCE (id or name); alone, list the server's sources",
        )
        parser.add_argument("--id", dest="source_id", help="source id (a slug)")
        parser.add_argument(
            "--set",
            dest="assignments",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help='a settings key overriding the preset (JSON values: true, null, ["cdn.example.com"])',
        )
        parser.add_argument("--no-dry-run", action="store_true", help="create the row without the dry run")
        parser.add_argument("--crawl-now", action="store_true", help="enqueue the first metadata pass at once")

    def handle(self, *args: Any, **options: Any) -> None:
        given = options["name_and_url"]
        if len(given) > 2:
            raise CommandError(f"expected [NAME] URL, got {len(given)} arguments: {' '.join(given)}")
        name, url = (given[0], given[1]) if len(given) == 2 else (None, given[0])
        overrides = dict(parse_assignment(a) for a in options["assignments"])
        if options["suwayomi"] is not None:
            self._add_suwayomi(name, url, options["suwayomi"], overrides, options)
            return
        preset = options["preset"]
        settings: dict[str, Any] = {"preset": preset} if preset else {}
        # One browser for the probe and the dry run: it launches only if a JavaScript challenge (or
        # requires_browser) needs it, and the challenge passed while probing is the new source's.
        from sources.browser import BrowserManager  # here: Playwright loads only when a site is added

        with closing(BrowserManager()) as browser:
            base_url, clearance, kind = url, None, "html"
            if preset is None:
                probe = self._detect(url, manual=bool(overrides), browser=browser)
                base_url, name, settings = probe.base_url, name or probe.title, probe.source_settings()
                clearance, kind = probe.clearance, probe.kind
            settings = {**settings, **overrides}
            self._add(name, base_url, settings, options, browser=browser, clearance=clearance, kind=kind)

    def _add_suwayomi(
        self, name: str | None, url: str, wanted: str, overrides: dict[str, Any], options: dict[str, Any]
    ) -> None:
        """List the server's sources (no SOURCE given), or add the one named, after its dry run."""
        try:
            version, found = suwayomi_adapter.server_sources(url, settings=overrides)
        except CrawlerError as exc:
            raise CommandError(f"cannot list the sources of the Suwayomi-Server at {url}: {exc}") from exc
        if not wanted:
            self.stdout.write(f"{len(found)} source(s) on {url} (Suwayomi-Server {version}):")
            for source in found:
                nsfw = "NSFW" if source.is_nsfw else "    "
                latest = "" if source.supports_latest else "  (no latest listing: walked by popular)"
                self.stdout.write(f"  {source.id:>20}  {source.lang:6} {nsfw}  {source.display_name}{latest}")
            self.stdout.write(f"Then: add_source {url} --suwayomi ID (or the name, with --set suwayomi_lang=LANG)")
            return
        try:
            picked = pick_source("new", url, wanted, overrides.get("suwayomi_lang"), found)
        except LookupError:
            picked = None  # the dry run names the missing extension and how to install it
        except CrawlerError as exc:
            raise CommandError(str(exc)) from exc
        given = {"suwayomi_source": wanted, **overrides}
        settings = suwayomi_config.settings_for(picked, given) if picked else given
        try:
            row = sites.new_source(
                name=name or (picked.display_name if picked else wanted),
                base_url=url,
                settings=settings,
                source_id=options["source_id"],
                kind=SUWAYOMI,
            )
        except sites.SiteRefused as exc:
            raise CommandError(str(exc)) from exc
        self._save(row, settings, options, browser=None, clearance=None)

    def _add(
        self,
        name: str | None,
        base_url: str,
        settings: dict[str, Any],
        options: dict[str, Any],
        *,
        browser: Any,
        clearance: Any,
        kind: str,
    ) -> None:
        try:
            row = sites.new_source(
                name=name or "", base_url=base_url, settings=settings, source_id=options["source_id"], kind=kind
            )
            kind_of(kind, source_id=row.id).config(settings, source_id=row.id)
        except (sites.SiteRefused, CrawlerError) as exc:
            raise CommandError(str(exc)) from exc
        self._save(row, settings, options, browser=browser, clearance=clearance)

    def _save(
        self, row: Any, settings: dict[str, Any], options: dict[str, Any], *, browser: Any, clearance: Any
    ) -> None:
        """Keep `row` after its dry run (unless --no-dry-run) and say what happens next."""
        try:
            added = sites.add_site(
                actor=None,
                row=row,
                check=not options["no_dry_run"],
                crawl_now=options["crawl_now"],
                via="cli",
                browser=browser,
                clearance=clearance,
            )
        except CrawlerError as exc:
            raise CommandError(f"dry run failed, source not added: {exc}") from exc
        if added.dry_run is not None:
            self.stdout.write("\n".join(added.dry_run.lines()))
        self.stdout.write(
            self.style.SUCCESS(
                f"added source {row.id!r} ({row.base_url}) settings={json.dumps(audit.without_secrets(settings))}"
            )
        )
        if options["crawl_now"]:
            started = f"job {added.crawl_job}" if added.crawl_job else "one was already in flight"
            self.stdout.write(f"First crawl enqueued ({started}): a running crawl worker picks it up now.")
        else:
            self.stdout.write(sites.first_crawl_note(row.id))

    def _detect(self, url: str, *, manual: bool, browser: Any) -> SiteProbe:
        """What the site itself says (base URL, preset, settings, title, challenge pass); CommandError when it
        names no theme."""
        try:
            probe = probe_site(url, browser=browser)
        except SiteUnreadable as exc:
            raise CommandError(f"cannot read {url}: {exc}") from exc
        if not kind_of(probe.kind).selectors:
            self.stdout.write(
                f"{probe.base_url} is {probe.title}: read through its API (kind {probe.kind}, docs/sources.md#mangadex)."
            )
            return probe
        message = probe.detection.explain(probe.base_url)
        if probe.detection.preset is None and not manual:
            raise CommandError(f"{message} Then: add_source {url} --preset NAME")
        self.stdout.write(message if probe.detection.preset else f"{message} Using the --set keys alone.")
        if probe.clearance is not None:
            self.stdout.write(
                f"Passed the site's JavaScript challenge (via the {probe.clearance.via}); the new source keeps the pass."
            )
        for finding in probe.findings:
            self.stdout.write(f"  found: {finding}")
        if probe.settings:
            self.stdout.write(f"  (correct any of these with --set KEY=VALUE: {', '.join(sorted(probe.settings))})")
        return probe
