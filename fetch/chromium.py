"""Which Chromium binary to launch: the operator's, Playwright's own, or the distribution's package.

Order: CHROMIUM_PATH when set; else the browser `playwright install` put in
its cache, when it is there; else Debian's `/usr/bin/chromium`, then Ubuntu's
`/usr/bin/chromium-browser`, then either name wherever PATH finds it. When
none is found the error names the package to install (or CHROMIUM_PATH),
never `playwright install`, which needs the internet and so cannot help a
machine that is offline.

`choose` is the decision, a pure function over what exists: it is tested
with made-up file systems and PATHs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence

from fetch.errors import Unreachable

# Debian's package `chromium`, then Ubuntu's `chromium-browser`.
DISTRIBUTION_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
COMMAND_NAMES = ("chromium", "chromium-browser")


class ChromiumMissing(Unreachable):
    """No Chromium to launch: the message names what to install or set."""


def choose(
    configured: str | None,
    bundled: str,
    *,
    paths: Sequence[str] = DISTRIBUTION_PATHS,
    names: Sequence[str] = COMMAND_NAMES,
    exists: Callable[[str], bool] = os.path.exists,
    which: Callable[[str], str | None] = shutil.which,
    distribution: str = "",
) -> str | None:
    """The executable to launch, or None for Playwright's bundled browser at `bundled`.

    ChromiumMissing when nothing is found; `distribution` (`/etc/os-release`'s
    ID, `distribution_id()`) picks the package the message names first.
    """
    if configured:
        return configured
    if bundled and exists(bundled):
        return None
    for path in paths:
        if exists(path):
            return path
    for name in names:
        found = which(name)
        if found:
            return found
    raise ChromiumMissing(missing_message(distribution, looked=[bundled, *paths, *names]))


def missing_message(distribution: str, *, looked: Sequence[str]) -> str:
    """What to do when no Chromium is found: the package for this distribution, or CHROMIUM_PATH."""
    debian, ubuntu = "`apt-get install chromium`", "`apt-get install chromium-browser`"
    install = f"{ubuntu} (Ubuntu)" if distribution == "ubuntu" else f"{debian} (Debian; {ubuntu} on Ubuntu)"
    where = ", ".join(item for item in looked if item)
    return f"no Chromium found (looked for {where}): install it with {install}, or set CHROMIUM_PATH to its binary"


def distribution_id(os_release: str = "/etc/os-release") -> str:
    """This system's distribution ID (`debian`, `ubuntu`...) from os-release; "" when it cannot be read."""
    try:
        with open(os_release, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return ""
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "ID":
            return value.strip().strip("\"'").lower()
    return ""
