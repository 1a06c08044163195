"""Errors the crawl pipeline raises and the worker loop tells apart."""


class CrawlerError(Exception):
    """A job failed for a reason worth retrying or dead-lettering (an ordinary failed attempt)."""


class SessionExpired(CrawlerError):
    """The source answered with its login wall. Not the job's fault: the worker
    releases the lease, sets the sticky `session_expired` flag and pauses
    session-needing work until an operator refreshes the session."""


class SourceUnavailable(CrawlerError):
    """The source could not be reached (connection refused, 5xx): counts toward the circuit breaker."""


class NotFound(CrawlerError):
    """The source says the item does not exist (404)."""


class FetchRefused(CrawlerError):
    """A URL points outside the source's own hosts and configured image hosts (SSRF guard)."""


class ImageRejected(CrawlerError):
    """Downloaded bytes are not an acceptable image: wrong type, over the byte cap, cut short."""


class SourceConfigError(CrawlerError):
    """A Source row's adapter settings are missing or malformed."""


class JobCancelled(Exception):
    """Raised inside a handler when its cancel event is set (shutdown, timeout, lost lease)."""
