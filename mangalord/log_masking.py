"""API keys never reach a log line in clear: `/key/<key>/opds/` is written `/key/mlk_abcd…/opds/`.

OPDS apps that cannot send a password carry the user's API key in the
catalog URL (`reader.key_paths`), and every request line is logged: by
Django (`django.request`'s "Not Found: /key/…", `django.server` and
daphne's `runserver`), by daphne's access log, and by our own loggers. A log
file is read by more people, and kept longer, than the key should be.

- `MaskApiKeys` is a logging filter on every handler of the LOGGING setting
  (`mangalord.settings`), which also routes Django's own server loggers to
  those handlers: it rewrites the record's message (and its traceback text)
  before any handler formats it.
- `mask_daphne_access_log` wraps daphne's access-log writer, which writes to
  stdout without the logging module; `mangalord.asgi` installs it, and
  daphne's command line imports the application before it builds the writer.

What stays is enough to tell keys apart (the prefix and four characters, as
the account page's hint shows six), never enough to use one.

This module is loaded while logging is configured, before Django's apps are:
it imports nothing of ours.
"""

from __future__ import annotations

import logging
import re
from typing import Any

# accounts.api_keys.KEY_PREFIX (a test keeps the two equal; that module cannot be imported this early).
KEY_PREFIX = "mlk_"
SHOWN = 4
# A key in a path segment after /key/ (whatever its shape: a mistyped key is still someone's secret)...
_KEY_SEGMENT = re.compile(r"(/key/)([^/\s?#\"']+)")
# ...and a key anywhere else: a query string (`?apikey=mlk_…`), a header echoed in an error.
# (Not one already cut: masking twice changes nothing.)
_BARE_KEY = re.compile(re.escape(KEY_PREFIX) + r"[A-Za-z0-9_-]+(?![A-Za-z0-9_-]|…)")


def _shortened(secret: str) -> str:
    keep = len(KEY_PREFIX) + SHOWN if secret.startswith(KEY_PREFIX) else SHOWN
    return secret if secret.endswith("…") and len(secret) <= keep + 1 else f"{secret[:keep]}…"


def mask(text: str) -> str:
    """`text` with every API key (in a /key/ path segment, or anywhere shaped like one) cut to its first characters."""
    if "/key/" not in text and KEY_PREFIX not in text:
        return text  # the common case costs two substring checks
    text = _KEY_SEGMENT.sub(lambda m: m.group(1) + _shortened(m.group(2)), text)
    return _BARE_KEY.sub(lambda m: _shortened(m.group(0)), text)


class MaskApiKeys(logging.Filter):
    """Rewrite a record's message and traceback text with `mask`; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the handler's own error reporting
            return True
        masked = mask(message)
        if masked != message:
            record.msg, record.args = masked, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask(record.exc_text)
        if record.stack_info:
            record.stack_info = mask(record.stack_info)
        return True


def mask_daphne_access_log() -> None:
    """Make daphne's access log (`AccessLogGenerator`, written straight to a stream) mask keys too. Idempotent.

    Daphne's command line offers no hook for its access-log writer, so its
    `write_entry` is wrapped: the request line is masked, the rest is as
    daphne writes it.
    """
    try:
        from daphne.access import AccessLogGenerator
    except ImportError:  # served by another ASGI server: it logs through the logging module, masked above
        return
    original = AccessLogGenerator.write_entry
    if getattr(original, "masks_api_keys", False):
        return

    def write_entry(self: Any, host: Any, date: Any, request: str, *args: Any, **kwargs: Any) -> None:
        original(self, host, date, mask(request), *args, **kwargs)

    write_entry.masks_api_keys = True  # type: ignore[attr-defined]
    AccessLogGenerator.write_entry = write_entry  # type: ignore[method-assign]
