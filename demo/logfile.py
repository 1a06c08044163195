"""The demo's log goes to a file: the console is for progress bars and the summary, never for log lines.

A newcomer's first run used to print some 790 INFO lines over its progress bars. The demo keeps the
project's logging (its format, its level, API keys masked) and points every console handler at one file
in the data directory instead, printing that file's path.
"""

from __future__ import annotations

import copy
import logging
import logging.config
from pathlib import Path
from typing import Any

from django.conf import settings

LOG_FILE_NAME = "demo.log"


def file_logging(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """`config` (a LOGGING dict) with every stream handler writing to `path` instead: filters and formats kept."""
    routed = copy.deepcopy(config)
    for handler in routed.get("handlers", {}).values():
        if handler.get("class") == "logging.StreamHandler":
            handler.pop("stream", None)
            handler.update({"class": "logging.FileHandler", "filename": str(path), "encoding": "utf-8"})
    return routed


def log_to_file(path: Path) -> Path:
    """Send this process's logging (and Python's warnings) to `path`, started afresh; returns the path.

    The routed configuration replaces `settings.LOGGING` too: loading the ASGI application when the
    server starts runs `django.setup()` again, which would otherwise put the console handlers back.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")  # this run's log: a re-run does not append to the last one
    settings.LOGGING = file_logging(settings.LOGGING, path)
    logging.config.dictConfig(settings.LOGGING)
    logging.captureWarnings(True)
    return path
