"""`manage.py series merge|split|undo|confirm|reject|order|alternates`: an operator's hand on series, audited like
every door."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog import series as service
from catalog.models import Manga, Series, SeriesChange, SeriesSuggestion


def _uuid(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError as exc:
        raise CommandError(f"{value!r} is not an id (a UUID as the admin and the API show it)") from exc


class Command(BaseCommand):
    help = (
        "Merge series, split mangas out of their series, undo a change, decide a suggestion, order sources, "
        "download alternates."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help="the operator recorded in the audit (a username)")
        parser.add_argument("--reason", default="", help="why, kept in the audit")
        sub = parser.add_subparsers(dest="action", required=True)
        merge = sub.add_parser("merge", help="merge SERIES... into TARGET")
        merge.add_argument("target", type=_uuid)
        merge.add_argument("others", nargs="+", type=_uuid)
        split = sub.add_parser("split", help="give each MANGA a series of its own")
        split.add_argument("mangas", nargs="+", type=_uuid)
        undo = sub.add_parser("undo", help="undo the change CHANGE")
        undo.add_argument("change", type=_uuid)
        for name in ("confirm", "reject"):
            sub.add_parser(name, help=f"{name} the suggestion").add_argument("suggestion", type=_uuid)
        order = sub.add_parser("order", help="the series' sources, preferred first (none: the global order)")
        order.add_argument("series", type=_uuid)
        order.add_argument("sources", nargs="*")
        alternates = sub.add_parser("alternates", help="download every source's copy of SERIES' chapters (on) or not")
        alternates.add_argument("series", type=_uuid)
        alternates.add_argument("state", choices=("on", "off"))

    def handle(self, *args: Any, **options: Any) -> None:
        actor = self._actor(options["user"])
        reason, action = options["reason"], options["action"]
        try:
            if action == "merge":
                target = self._get(Series, options["target"])
                others = [self._get(Series, s) for s in options["others"]]
                self._done(service.merge_series(target, others, actor=actor, via="cli", reason=reason))
            elif action == "split":
                mangas = [self._get(Manga, m) for m in options["mangas"]]
                self._done(service.split_mangas(mangas, actor=actor, via="cli", reason=reason))
            elif action == "undo":
                change = self._get(SeriesChange, options["change"])
                self._done(service.undo_change(change, actor=actor, via="cli", reason=reason))
            elif action == "confirm":
                suggestion = self._get(SeriesSuggestion, options["suggestion"])
                self._done(service.confirm_suggestion(suggestion, actor=actor, via="cli"))
            elif action == "reject":
                service.reject_suggestion(self._get(SeriesSuggestion, options["suggestion"]), actor=actor)
                self.stdout.write(f"suggestion {options['suggestion']} rejected")
            elif action == "alternates":
                series = self._get(Series, options["series"])
                service.set_download_alternates(series, options["state"] == "on", actor=actor, via="cli")
                self.stdout.write(f"series {series.pk}: alternates {options['state']}")
            else:
                series = self._get(Series, options["series"])
                service.set_source_order(series, options["sources"])
                self.stdout.write(f"series {series.pk}: sources {', '.join(series.source_order) or '(global order)'}")
        except service.SeriesChangeRefused as exc:
            raise CommandError(str(exc)) from exc

    def _done(self, change: SeriesChange) -> None:
        self.stdout.write(f"{change.action} {change.pk}: moved {len(change.moves)} manga(s)")

    @staticmethod
    def _get(model: Any, pk: uuid.UUID) -> Any:
        try:
            return model.objects.get(pk=pk)
        except model.DoesNotExist as exc:
            raise CommandError(f"no {model._meta.verbose_name} with id {pk}") from exc

    @staticmethod
    def _actor(username: str | None) -> Any:
        if username is None:
            return None
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist as exc:
            raise CommandError(f"--user {username!r}: no such user") from exc
