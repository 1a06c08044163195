"""Input and output serializers of the admin crawler API.

Input serializers are where bad input stops: unknown ids, wrong scopes,
malformed session values all fail here with a field-level message, before a
service function is called, so a rejected request changes nothing.
"""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog.api.inputs import AsciiIntegerField
from catalog.api.seek import MAX_OFFSET_ROWS
from catalog.disk import parse_floor
from catalog.models import Chapter, Manga, Source
from console.control import actions, backlog
from jobs import kinds
from jobs.models import Job, JobState
from jobs.requeue import RequeueScope
from listing.paginators import MAX_PAGE

# --- inputs --------------------------------------------------------------------------


def _validate_source_id(value: str, *, must_be_enabled: bool) -> str:
    source = Source.objects.filter(id=value).only("enabled").first()
    if source is None:
        raise serializers.ValidationError(f"Unknown source {value!r}.")
    if must_be_enabled and not source.enabled:
        raise serializers.ValidationError(f"Source {value!r} is disabled.")
    return value


class PassRequestInput(serializers.Serializer):
    source = serializers.CharField(required=False, max_length=64, help_text="Source id; default: every enabled source.")

    def validate_source(self, value: str) -> str:
        return _validate_source_id(value, must_be_enabled=True)


class SessionInput(serializers.Serializer):
    # trim_whitespace off: "abc\n" must be refused, not silently trimmed into a valid value.
    phpsessid = serializers.CharField(
        min_length=1,
        max_length=256,
        trim_whitespace=False,
        write_only=True,
        validators=[
            RegexValidator(
                r"\A" + actions.PHPSESSID_PATTERN.pattern + r"\Z",
                message="Must be 1-256 characters of A-Z, a-z, 0-9, ',' and '-'.",
            )
        ],
        help_text="The PHPSESSID cookie value. Stored server-side, never echoed.",
    )
    source = serializers.CharField(required=False, max_length=64, help_text="Source id; default: the enabled one.")

    def validate_phpsessid(self, value: str) -> str:
        if not isinstance(self.initial_data.get("phpsessid"), str):
            raise serializers.ValidationError("Must be a string.")
        return value

    def validate_source(self, value: str) -> str:
        return _validate_source_id(value, must_be_enabled=False)


_SCOPE_TARGETS: dict[str, Any] = {
    RequeueScope.MANGA.value: Manga,
    RequeueScope.CHAPTER.value: Chapter,
    RequeueScope.JOB.value: Job,
}


class RequeueInput(serializers.Serializer):
    scope = serializers.ChoiceField(choices=[s.value for s in RequeueScope])
    target = serializers.UUIDField(required=False, allow_null=True, help_text="Manga, chapter or job id.")
    confirm = serializers.BooleanField(default=False, help_text="Required (true) for scope 'all'.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        scope, target = attrs["scope"], attrs.get("target")
        if scope == RequeueScope.ALL.value:
            if target is not None:
                raise serializers.ValidationError({"target": "Scope 'all' takes no target."})
            if not attrs["confirm"]:
                raise serializers.ValidationError({"confirm": "Requeueing every dead job needs confirm: true."})
            return attrs
        if target is None:
            raise serializers.ValidationError({"target": f"Scope {scope!r} needs a target id."})
        model = _SCOPE_TARGETS[scope]
        row = model.objects.filter(pk=target).values("pk", *(["state"] if model is Job else [])).first()
        if row is None:
            raise serializers.ValidationError({"target": f"No {scope} with id {target}."})
        if model is Job and row["state"] != JobState.DEAD:
            raise serializers.ValidationError({"target": f"Job {target} is {row['state']}, not dead."})
        return attrs


class JobListQuery(serializers.Serializer):
    q = serializers.CharField(required=False, allow_blank=True, max_length=200, help_text="Search titles.")


class HistoryQuery(JobListQuery):
    state = serializers.ChoiceField(choices=JobState.values, required=False)
    kind = serializers.ChoiceField(choices=list(kinds.names()), required=False)


def _cursor(rows: str, direction: str, link: str) -> serializers.CharField:
    return serializers.CharField(
        required=False, max_length=500, help_text=f"{rows} {direction} this cursor (`{link}` of a page)."
    )


class BacklogQuery(JobListQuery):
    # Bounded so the OFFSET it becomes fits the database's bigint (a bigger page is a 400, not a 500).
    page = AsciiIntegerField(
        required=False,
        min_value=1,
        max_value=MAX_PAGE,
        default=1,
        help_text="Page of the active jobs. Beside their cursor it only numbers the page; without it the jobs "
        f"are paged by number, up to their first {MAX_OFFSET_ROWS:,} rows (a 400 naming the cursor to "
        "follow past them).",
    )
    covers_page = AsciiIntegerField(
        required=False,
        min_value=1,
        max_value=MAX_PAGE,
        default=1,
        help_text="Page of the mangas missing covers, numbered apart from the jobs' `page`, the same way beside "
        "or without its own cursor.",
    )
    page_size = AsciiIntegerField(required=False, min_value=1, max_value=100, default=50)
    after = _cursor("Active jobs", "after", "next_after")
    before = _cursor("Active jobs", "before", "previous_before")
    covers_after = _cursor("Missing covers", "after", "next_after")
    covers_before = _cursor("Missing covers", "before", "previous_before")


class DiskFloorInput(serializers.Serializer):
    floor = serializers.CharField(
        allow_null=True,
        max_length=50,
        help_text="Free space page downloads keep, as CRAWLER_MIN_FREE_DISK takes it (5GiB, 500MB, 5%, 0 for "
        "none); null returns to CRAWLER_MIN_FREE_DISK.",
    )

    def validate_floor(self, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_floor(value)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc)) from exc
        return value


# --- outputs -------------------------------------------------------------------------


class JobMangaSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()


class JobRowSerializer(serializers.ModelSerializer):
    label = serializers.SerializerMethodField()
    manga = serializers.SerializerMethodField()
    chapter_id = serializers.UUIDField(read_only=True, allow_null=True)
    page_id = serializers.UUIDField(read_only=True, allow_null=True)

    class Meta:
        model = Job
        fields = (
            "id",
            "kind",
            "state",
            "label",
            "manga",
            "chapter_id",
            "page_id",
            "payload",
            "attempts",
            "max_attempts",
            "last_error",
            "scheduled_at",
            "leased_until",
            "created_at",
            "updated_at",
        )

    def get_label(self, job: Job) -> str:
        return backlog.job_label(job)

    @extend_schema_field(JobMangaSerializer(allow_null=True))
    def get_manga(self, job: Job) -> dict[str, Any] | None:
        manga = backlog.job_manga(job)
        return None if manga is None else {"id": manga.id, "title": manga.title}


class MissingCoverSerializer(serializers.ModelSerializer):
    class Meta:
        model = Manga
        fields = ("id", "title", "cover_state", "cover_url", "updated_at")


class PassResultSerializer(serializers.Serializer):
    source = serializers.CharField(source="source_id")
    job_id = serializers.UUIDField(allow_null=True)
    skipped = serializers.BooleanField(help_text="True when a pass for this source was already in flight.")


class PassResponseSerializer(serializers.Serializer):
    detail = serializers.CharField()
    results = PassResultSerializer(many=True)


class RestartResponseSerializer(serializers.Serializer):
    generation = serializers.IntegerField(help_text="Restart request generation workers will honour.")


class SessionResponseSerializer(serializers.Serializer):
    source = serializers.CharField()
    stored = serializers.BooleanField()


class RequeueResponseSerializer(serializers.Serializer):
    scope = serializers.CharField()
    target = serializers.UUIDField(allow_null=True)
    requeued = serializers.IntegerField()


class ListPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Rows, counted up to CATALOG_SEARCH_COUNT_CAP.")
    count_exact = serializers.BooleanField(help_text="False when `count` is that cap (a lower bound).")
    next_after = serializers.CharField(allow_null=True, help_text="Cursor of the next page, null on the last.")
    previous_before = serializers.CharField(allow_null=True, help_text="Cursor of the page before, null on the first.")


class ActiveJobsPageSerializer(ListPageSerializer):
    results = JobRowSerializer(many=True)


class MissingCoversPageSerializer(ListPageSerializer):
    results = MissingCoverSerializer(many=True)


class BacklogSerializer(serializers.Serializer):
    page = serializers.IntegerField()
    covers_page = serializers.IntegerField()
    page_size = serializers.IntegerField()
    active_jobs = ActiveJobsPageSerializer()
    missing_covers = MissingCoversPageSerializer()


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


class DiskFloorSerializer(serializers.Serializer):
    floor = serializers.CharField(help_text="The floor in force.")
    set_by = serializers.CharField(help_text="CRAWLER_MIN_FREE_DISK, or the operator's floor.")
    downloads_paused = serializers.CharField(
        allow_null=True, help_text="Why page downloads are paused as this server sees the storage, or null."
    )
