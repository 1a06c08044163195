"""After `export_cbz` wrote files, ask the configured media servers to rescan (nothing written: nothing to ask)."""

from __future__ import annotations

from typing import Any

from upkeep.rescans import request_rescans


def rescan_after_export(sender: Any, *, written: int, **kwargs: Any) -> None:
    if written > 0:
        request_rescans()
