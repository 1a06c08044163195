"""The body of a test client's response, whether it was sent whole or streamed (small images are sent whole)."""

from __future__ import annotations

from typing import Any


def body_of(response: Any) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content
