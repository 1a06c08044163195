"""One busy period of the status broadcaster: the threads its listener and composer run in, and their counters.

Its own module so the broadcaster (`console.dashboard.broadcaster`), which
starts a run, and the listeners (`console.dashboard.listeners`), which run
inside one, both stand on it without importing each other.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


@dataclass
class BroadcastStats:
    """Counters the tests and the fan-out benchmark read: DB work must not scale with subscribers."""

    signals: int = 0
    composes: int = 0
    queries: int = 0
    published: int = 0


@dataclass
class Run:
    """The threads of one busy period (first subscriber to last); stopped runs are never restarted."""

    stop: threading.Event = field(default_factory=threading.Event)
    poke: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    stats: BroadcastStats = field(default_factory=BroadcastStats)
    started: float = field(default_factory=time.monotonic)
