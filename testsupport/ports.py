"""Free TCP ports on 127.0.0.1 for servers the tests start as separate processes."""

from __future__ import annotations

import socket
import time


def free_port() -> int:
    """A port nothing listens on right now (the caller's server binds it next; a race is retried by callers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float, alive=lambda: True) -> bool:
    """True once 127.0.0.1:`port` accepts a connection; False on timeout or when `alive()` turns False."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False
