"""`demo` checks its port before it crawls: a busy port is one line and a non-zero exit within seconds."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from conftest import REPO_ROOT
from demo.serving import port_problem

pytestmark = pytest.mark.sqlite_ok


@pytest.fixture
def busy_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_a_busy_port_is_named_with_what_to_do(busy_port):
    assert port_problem("127.0.0.1", busy_port) == (
        f"cannot serve on 127.0.0.1:{busy_port}: Address already in use "
        "(is another server running there? pick another with --port)"
    )


def test_a_free_port_and_a_foreign_address(busy_port):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    assert port_problem("127.0.0.1", free) is None
    assert port_problem("192.0.2.1", free).startswith(f"cannot serve on 192.0.2.1:{free}: Cannot assign requested")


def test_demo_on_a_busy_port_exits_before_crawling(busy_port, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    result = subprocess.run(
        [sys.executable, "manage.py", "demo", "--port", str(busy_port), "--no-analysis", "--mangas", "1"],
        env={**env, "MANGALORD_DATA_DIR": str(tmp_path)},
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""  # no migration, no demo site, no crawl
    assert result.stderr.splitlines() == [
        f"CommandError: cannot serve on 127.0.0.1:{busy_port}: Address already in use "
        "(is another server running there? pick another with --port)"
    ]
    assert not (tmp_path / "mangalord.sqlite3").exists()
