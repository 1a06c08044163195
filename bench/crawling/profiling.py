"""Where a crawl worker's time goes: py-spy around the worker, and summaries of what it and the SQL counter saw.

py-spy (`bench/requirements.txt`) starts the worker as its own child, so it
may read the worker's memory without extra ptrace rights, and samples it 100
times a second with `--gil`: only the thread holding the GIL, i.e. where the
worker's Python CPU goes. (Without `--gil` py-spy also counts threads that
are runnable but waiting, e.g. for a database answer on a busy machine:
there, five times the worker's CPU time.) Time in C code that released the
GIL (socket and file I/O, fsync, hashing large buffers) is not in these
samples; the worker's system CPU time, printed beside them, bounds it. It
writes a speedscope file (open it at https://www.speedscope.app). The text summary folds the samples by function, ignoring
line numbers: self time (the function was on top of the stack), total time
(it was anywhere on the stack, counted once per sample) and self time by
package, which is where the "15 ms a page" question is answered.
"""

from __future__ import annotations

import json
import sysconfig
from collections import Counter
from pathlib import Path

STDLIB = sysconfig.get_paths()["stdlib"]


def pyspy_command(output: Path, rate: int = 100) -> list[str]:
    return ["py-spy", "record", "--gil", "--format", "speedscope", "--rate", str(rate), "--output", str(output), "--"]


def package_of(path: str, repo_root: str) -> str:
    """A readable owner for a source file: our module path, a third-party package, or the stdlib module."""
    if "site-packages/" in path:
        parts = path.split("site-packages/", 1)[1].split("/")
        return "/".join(parts[:2]) if parts[0] == "django" and len(parts) > 2 else parts[0]
    if path.startswith(repo_root):
        return path[len(repo_root) :].lstrip("/")
    if path.startswith(STDLIB):
        return "stdlib " + path[len(STDLIB) :].lstrip("/").split("/")[0]
    return path or "?"


def _short(path: str, repo_root: str) -> str:
    for marker in ("site-packages/", repo_root + "/", STDLIB + "/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def summarize_speedscope(path: Path, repo_root: str, *, top: int = 25) -> str:
    data = json.loads(path.read_text())
    frames = data["shared"]["frames"]
    self_secs: Counter[str] = Counter()
    total_secs: Counter[str] = Counter()
    package_secs: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    sampled = 0.0
    names = [f"{f['name']} ({_short(f.get('file') or '', repo_root)})" for f in frames]
    packages = [package_of(f.get("file") or "", repo_root) for f in frames]
    for profile in data["profiles"]:
        thread = profile["name"].split('"')[1] if '"' in profile["name"] else profile["name"]
        for stack, weight in zip(profile["samples"], profile["weights"], strict=True):
            if not stack:
                continue
            sampled += weight
            threads[thread.rstrip("0123456789_- ") or thread] += weight
            self_secs[names[stack[-1]]] += weight
            package_secs[packages[stack[-1]]] += weight
            for name in {names[i] for i in stack}:
                total_secs[name] += weight
    lines = [f"py-spy --gil: {sampled:.1f} s of samples of the thread holding the GIL, in {path.name}"]
    lines.append("by thread: " + ", ".join(f"{name} {secs:.1f} s" for name, secs in threads.most_common(8)))
    for title, counter in (
        ("self time by package", package_secs),
        ("self time by function", self_secs),
        ("total time by function (on the stack)", total_secs),
    ):
        lines.append(f"\n{title}:")
        for name, secs in counter.most_common(top if "function" in title else 15):
            lines.append(f"  {100 * secs / sampled:5.1f}%  {secs:7.2f} s  {name}")
    return "\n".join(lines)


def summarize_statements(path: Path, pages: int, xact_commits: int, *, top: int = 20) -> str:
    """Statements and transactions per page from the SQL counter, and the statements that cost most."""
    data = json.loads(path.read_text())
    statements = data["statements"]
    count = sum(row[0] for row in statements.values())
    secs = sum(row[1] for row in statements.values())
    autocommit = sum(row[2] for row in statements.values())
    per = max(pages, 1)
    lines = [
        f"SQL statements: {count:,} ({count / per:.1f} per page), {secs:.1f} s waiting on them in the worker's threads"
        f" ({1000 * secs / per:.1f} ms per page)",
        f"transactions: {xact_commits:,} committed in the database ({xact_commits / per:.1f} per page; pg_stat_database"
        f" xact_commit), of which the worker's explicit commits {data['commit']:,} ({data['commit'] / per:.1f} per page)"
        f" and single statements in autocommit {autocommit:,} ({autocommit / per:.1f} per page)",
        f"\ntop statements by count (of {len(statements)} distinct):",
        "  per page   count   ms each   total s  statement",
    ]
    ranked = sorted(statements.items(), key=lambda item: item[1][0], reverse=True)
    for text, (n, spent, _) in ranked[:top]:
        lines.append(f"  {n / per:8.2f} {n:7,} {1000 * spent / n:9.2f} {spent:9.2f}  {text[:160]}")
    return "\n".join(lines)
