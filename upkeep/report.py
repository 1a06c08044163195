"""The verify report as the dashboard shows it: the latest run's counters and state, read-only."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count

from upkeep.models import VerifyFinding, VerifyRun

PROBLEMS = tuple(VerifyFinding.Kind)


@dataclass(frozen=True)
class ReportSummary:
    run: VerifyRun
    problems: list[tuple[str, str, int, int]]  # (kind, label, found, still open)

    @property
    def finished(self) -> bool:
        return self.run.finished_at is not None


def latest_report() -> ReportSummary | None:
    """The newest run with its problems by kind; open counts come from the (run, kind) partial index."""
    run = VerifyRun.objects.order_by("-started_at", "-id").first()
    if run is None:
        return None
    open_counts = _open_counts(run)
    problems = [
        (kind.value, str(kind.label), int(run.counts.get(kind.value, 0)), open_counts.get(kind.value, 0))
        for kind in PROBLEMS
    ]
    return ReportSummary(run, problems)


def _open_counts(run: VerifyRun) -> dict[str, int]:
    rows = VerifyFinding.objects.filter(run=run, repaired_at=None).values("kind").annotate(n=Count("id"))
    return {row["kind"]: row["n"] for row in rows}
