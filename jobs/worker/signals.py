"""SIGTERM and SIGINT for a worker process: the first asks the loop to stop, a second forces the exit."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

logger = logging.getLogger(__name__)


@contextmanager
def stop_on_signals(stopping: threading.Event, request_stop: Callable[[], None]) -> Iterator[None]:
    """Within the block SIGTERM/SIGINT call `request_stop`, or exit at once once `stopping` is set.

    The previous handlers are restored on the way out.
    """

    def on_signal(signum: int, _frame: object) -> None:
        if stopping.is_set():
            logger.warning("second signal %s: forcing exit", signal.Signals(signum).name)
            os._exit(1)
        logger.info("signal %s: stopping (in-flight jobs are released)", signal.Signals(signum).name)
        request_stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
