"""What an analyze worker shows on the dashboard while it works: how many pages it analysed, in its phase.

The dashboard lists every worker with its phase, and its queue table counts the `analyze_page` jobs
still waiting; with this phase an operator (or a newcomer watching the demo) sees the analysis move
page by page. The count is the worker's own since it started: no query per page.
"""

from __future__ import annotations

import threading
from typing import Any
from weakref import WeakKeyDictionary

_lock = threading.Lock()
_finished: WeakKeyDictionary[Any, tuple[int, int]] = WeakKeyDictionary()


def analysing(analysed: int, failed: int) -> dict[str, Any]:
    """The phase of a worker that has analysed `analysed` pages and failed `failed` since it started."""
    return {"state": "analysing", "analysed": analysed, "failed": failed}


def page_finished(status: Any, *, failed: bool) -> None:
    """Count one page on `status` (the worker's status handle) and publish the new phase."""
    with _lock:
        analysed, failures = _finished.get(status, (0, 0))
        counts = (analysed + (not failed), failures + failed)
        _finished[status] = counts
    status.set_phase(analysing(*counts))
