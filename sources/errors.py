"""Errors of the adapters and the passes: the engine settles each by its `jobs.errors` base (`jobs.worker.outcomes`)."""

from __future__ import annotations

from datetime import datetime

from catalog.errors import ImageRejected
from jobs import errors as engine

__all__ = [
    "ChallengeNotPassed",
    "CrawlerError",
    "FetchRefused",
    "ImageRefused",
    "ImageRejected",
    "NotFound",
    "PageTooLarge",
    "PermanentError",
    "RetryLater",
    "SessionExpired",
    "SourceBusy",
    "SourceConfigError",
    "SourceCoolingDown",
    "SourceUnavailable",
    "StorageFull",
]


class CrawlerError(Exception):
    """A job failed for a reason worth retrying or dead-lettering (an ordinary failed attempt)."""


class SessionExpired(CrawlerError, engine.Paused):
    """The source answered with its login wall. Not the job's fault: the worker
    releases the lease, sets the sticky `session_expired` flag and pauses
    session-needing work until an operator refreshes the session."""


class StorageFull(CrawlerError, engine.Held):
    """Free disk space is under CRAWLER_MIN_FREE_DISK (or a page write found the disk full).

    Not the job's fault: the worker releases it (no attempt spent) and stops
    leasing page downloads until there is room again (crawler.passes.disk_guard).
    """


class SourceUnavailable(CrawlerError, engine.Unavailable):
    """The source could not be reached (connection refused, 5xx): counts toward the circuit breaker."""


class PermanentError(CrawlerError, engine.PermanentError):
    """A deterministic failure: running the job again cannot succeed until someone changes something.

    Dead-lettered at once with its message as the reason, never retried like an
    outage: a configuration error, a required selector matching nothing, an
    off-host URL refused, a 404/410 on a detail or chapter page.
    """


class RetryLater(CrawlerError, engine.RetryLater):
    """The source asked us to come back later (429/503 with Retry-After).

    The job is rescheduled at `until` without burning an attempt; the queue
    bounds how often that may happen to one job, so a source that always says
    "later" still ends in dead-letter with a clear reason.
    """


class SourceCoolingDown(RetryLater):
    """The source is cooling down after a 429/503 with Retry-After: no worker on any host asks it before `until`.

    Raised by the response that started the cooldown and by requests that
    would otherwise go out during it; the job is deferred to `until` like any
    `RetryLater`, without burning an attempt.
    """

    def __init__(self, message: str, *, source_id: str, until: datetime) -> None:
        super().__init__(message, until=until)
        self.source_id = source_id


class ChallengeNotPassed(SourceCoolingDown):
    """The site answered a JavaScript challenge that nothing in reach got past (or may try again yet).

    A source error, not a parse error: the message names the challenge, the
    URL and what to configure (`requires_browser` / a crawl worker with its
    Chromium, or CRAWLER_CHALLENGE_SOLVER_URL). Transient: challenges come and
    go, so the source cools down until the next pass is allowed
    (CRAWLER_CHALLENGE_PASS_INTERVAL_SECS) and the job is deferred to then; a
    site that keeps challenging ends in dead-letter with this message after
    JOBS_MAX_DEFERRALS.
    """


class SourceBusy(CrawlerError, engine.Busy):
    """Other jobs have this source's requests (its tokens or slots): this job gives its thread back.

    Not a failure and not the source's "later": the job goes back to the
    queue without burning an attempt or a deferral, and this worker leases no
    other job of the source for a moment (`crawler.politeness.slots.busy_sources`).
    """

    def __init__(self, message: str, *, source_id: str) -> None:
        super().__init__(message)
        self.source_id = source_id


class ImageRefused(PermanentError):
    """A page image the source serves cannot be stored: not an image, over a cap, or not decodable.

    The same URL serves the same bytes on every try, so the job dies at once
    with a reason naming the URL instead of retrying for a quarter of an hour.
    """


class NotFound(PermanentError):
    """The source says the item does not exist (404/410): asking again cannot succeed."""


class FetchRefused(PermanentError):
    """A URL points outside the source's own hosts and configured image hosts, or its host resolves to an
    address the outbound rule refuses (loopback, private, link-local...: `fetch.outbound`)."""


class PageTooLarge(PermanentError):
    """A page's body is over CRAWLER_MAX_PAGE_BYTES: the same URL serves the same page on every try."""


class SourceConfigError(PermanentError):
    """A Source row's adapter settings are missing or malformed."""


class SelectorMatchedNothing(SourceConfigError):
    """A selector the crawl needs (list anchors on page 1, chapters, pages) matched nothing on a page.

    The message names the source, the settings key, the selector and the URL:
    the operator fixes the settings, retrying the same page cannot help.
    """

    def __init__(self, source_id: str, key: str, selector: str, url: str, *, hint: str = "") -> None:
        self.source_id, self.key, self.selector, self.url = source_id, key, selector, url
        extra = f"; {hint}" if hint else ""
        super().__init__(
            f"source {source_id!r}: settings key {key!r} (selector {selector!r}) matched nothing on {url}{extra}"
        )
