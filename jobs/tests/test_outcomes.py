"""The failure table: how the loop settles each kind of handler outcome (pure, no database)."""

from datetime import UTC, datetime

import pytest

from jobs.errors import JobCancelled
from jobs.worker.outcomes import Disposition, disposition
from sources.errors import (
    CrawlerError,
    FetchRefused,
    ImageRejected,
    NotFound,
    RetryLater,
    SessionExpired,
    SourceBusy,
    SourceConfigError,
    SourceUnavailable,
)

LATER = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (None, Disposition.DONE),
        (SessionExpired("login wall"), Disposition.PAUSE),
        (JobCancelled("shutdown"), Disposition.RELEASE),
        (SourceBusy("other jobs have its tokens", source_id="s"), Disposition.RELEASE),
        (RetryLater("429 Retry-After: 30", until=LATER), Disposition.DEFER),
        (SourceConfigError("source 'x': settings key 'title' ..."), Disposition.DEAD),
        (FetchRefused("http://evil.example/ is not one of the source's hosts"), Disposition.DEAD),
        (SourceUnavailable("503"), Disposition.RETRY),
        (NotFound("404 on a detail page"), Disposition.DEAD),
        (ImageRejected("not an image"), Disposition.RETRY),
        (CrawlerError("anything else"), Disposition.RETRY),
        (ValueError("a bug"), Disposition.RETRY),
    ],
)
def test_disposition_of_each_outcome(error, expected):
    assert disposition(error) is expected


def test_retry_later_keeps_its_time():
    assert RetryLater("later", until=LATER).until == LATER
