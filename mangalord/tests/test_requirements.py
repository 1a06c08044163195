"""What `pip install -r requirements.txt` pulls in, read from the installed packages' own metadata."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import REPO_ROOT

pytestmark = pytest.mark.sqlite_ok


def runtime_closure() -> set[str]:
    """Every distribution requirements.txt needs, transitively (extras as asked, markers for this Python)."""
    lines = (Path(REPO_ROOT) / "requirements.txt").read_text().splitlines()
    todo = [Requirement(re.sub(r"\s+#.*", "", line)) for line in lines if line.strip() and not line.startswith("#")]
    seen: set[str] = set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        for raw in metadata.requires(req.name) or []:
            dep = Requirement(raw)
            if dep.marker is None or any(dep.marker.evaluate({"extra": extra}) for extra in req.extras or {""}):
                todo.append(dep)
    return seen


def test_the_runtime_holds_one_opencv_the_headless_one():
    needed = runtime_closure()
    assert "opencv-python-headless" in needed
    assert "opencv-python" not in needed, "a GUI OpenCV beside the headless one: two cv2 builds in one environment"
