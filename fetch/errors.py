"""What the transports raise when a fetch cannot be made: the caller maps each kind to its own errors.

The crawler settles a job by the class of what it raised (`sources.errors`,
on the engine's bases); this package knows nothing of jobs, so it says only
what went wrong and the caller translates (`sources.browser`).
"""

from __future__ import annotations


class FetchError(Exception):
    """A fetch failed; the message says what and where (never a cookie value)."""


class Unreachable(FetchError):
    """The target (or the browser that would reach it) could not be used: worth trying again later."""


class Refused(FetchError):
    """The URL, or an address it resolves to, is not one the guard lets us fetch: the same on every try."""


class TooLarge(FetchError):
    """The answer is over the caller's size cap: the same URL serves the same page on every try."""
