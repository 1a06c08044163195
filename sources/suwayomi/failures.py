"""What a Suwayomi error means to the crawl: pure decisions from the server's answers, tested as tables.

Suwayomi answers GraphQL errors with HTTP 200 and the extension's exception
text as the message. Those texts are the extensions' own, so they are read
by what they say: a login or WebView the source needs is a permanent source
error (an operator opens the source in Suwayomi's WebView; retrying cannot
help), the site behind the extension failing with a 5xx or a timeout is an
outage of the source (released, retried, counted by the circuit breaker), a
404 is a gone item, and anything else an ordinary failed attempt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sources.errors import CrawlerError, NotFound, PermanentError, SourceConfigError, SourceUnavailable
from sources.suwayomi.answers import ServerExtension, ServerSource

_NEEDS_LOGIN = re.compile(
    r"web\s*view|log\s*in|sign\s*in|login|captcha|cloudflare|not logged|authoriz|premium", re.IGNORECASE
)
_NOT_INSTALLED = re.compile(r"not installed|source (?:with id \S+ )?(?:was )?not found|no source", re.IGNORECASE)
_HTTP_STATUS = re.compile(r"HTTP error (\d{3})", re.IGNORECASE)
_OUTAGE = re.compile(r"timeout|timed out|connection (?:refused|reset)|unknownhost|unable to resolve", re.IGNORECASE)


class SourceNeedsLogin(PermanentError):
    """The extension asks for a login or a WebView visit (its site's session or challenge) before it answers."""


def error_for(source_id: str, label: str, what: str, messages: Sequence[str]) -> CrawlerError:
    """The crawler error for GraphQL `messages` answered to `what` (e.g. "list page 2") of Suwayomi source `label`."""
    text = "; ".join(messages) or "an error without a message"
    where = f"source {source_id!r} (Suwayomi source {label}): {what} failed: {text}"
    if _NEEDS_LOGIN.search(text):
        return SourceNeedsLogin(
            f"{where} — the source needs a login or a WebView visit: open it in Suwayomi's WebUI "
            "(Browse → the source → WebView), log in or pass the check there, then retry the dead jobs"
        )
    if _NOT_INSTALLED.search(text):
        return SourceConfigError(f"{where} — is the source's extension still installed in Suwayomi?")
    status = _HTTP_STATUS.search(text)
    if status is not None:
        code = int(status.group(1))
        if code in (404, 410):
            return NotFound(where)
        if code == 429 or code >= 500:
            return SourceUnavailable(where)
    if _OUTAGE.search(text):
        return SourceUnavailable(where)
    return CrawlerError(where)


def pick_source(
    source_id: str, server: str, wanted: str, lang: str | None, sources: Sequence[ServerSource]
) -> ServerSource:
    """The server's source the settings name, by id or by name (and language); raises naming what to fix.

    Returns the match; raises SourceConfigError when a name matches several
    languages and `suwayomi_lang` does not choose. A source not found at all
    is `missing_source_error`'s to word, with the extensions the server knows.
    """
    by_id = [s for s in sources if s.id == wanted]
    if by_id:
        return by_id[0]
    folded = wanted.casefold()
    named = [s for s in sources if folded in (s.name.casefold(), s.display_name.casefold())]
    if lang is not None:
        named = [s for s in named if s.lang.casefold() == lang.casefold()]
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        langs = ", ".join(sorted(s.lang for s in named))
        raise SourceConfigError(
            f"source {source_id!r}: settings key 'suwayomi_source' {wanted!r} names sources in several "
            f"languages on {server} ({langs}): set 'suwayomi_lang' to one of them, or give the source's id"
        )
    raise LookupError(wanted)


def missing_source_error(
    source_id: str, server: str, wanted: str, lang: str | None, extensions: Sequence[ServerExtension]
) -> SourceConfigError:
    """The error for a source the server does not have, saying how to install its extension in Suwayomi."""
    named = f"{wanted!r}" + (f" ({lang})" if lang else "")
    lead = f"source {source_id!r}: settings key 'suwayomi_source': Suwayomi at {server} has no source {named}"
    if wanted.lstrip("-").isdigit():
        return SourceConfigError(
            f"{lead}: no installed extension has a source of that id — install its extension in Suwayomi's WebUI "
            "(Browse → Extensions → Install), or pick an id the server lists (add_source URL --suwayomi)"
        )
    available = [e for e in extensions if not e.is_installed]
    installed = [e for e in extensions if e.is_installed]
    if available:
        ext = available[0]
        return SourceConfigError(
            f"{lead}: its extension {ext.name!r} ({ext.pkg_name}) is not installed — install it in Suwayomi's "
            "WebUI (Browse → Extensions → Install) or with the updateExtension mutation "
            f'(input: {{id: "{ext.pkg_name}", patch: {{install: true}}}}), then add the source again'
        )
    if installed:
        ext = installed[0]
        return SourceConfigError(
            f"{lead}: extension {ext.name!r} ({ext.pkg_name}) is installed but lists no such source — "
            "check the name and language against the server's sources (add_source --kind suwayomi lists them)"
        )
    return SourceConfigError(
        f"{lead}, nor an extension of that name in its extension repositories — add a repository in Suwayomi "
        "(Settings → Browse → Extension repositories, e.g. keiyoushi's index.min.json), install the extension "
        "(Browse → Extensions), then add the source again"
    )
