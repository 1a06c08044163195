"""After `export_cbz` wrote files, ask the configured media servers to rescan (nothing written: nothing to ask).

Connected at every process's start (`UpkeepConfig.ready`), so the HTTP client is imported only when an export
actually asks: a worker's start loads nothing of it.
"""

from __future__ import annotations

from typing import Any


def rescan_after_export(sender: Any, *, written: int, **kwargs: Any) -> None:
    if written > 0:
        from upkeep.rescans import request_rescans

        request_rescans()
