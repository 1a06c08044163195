"""The benchmark's CPU figure for a command that forks its workers: each child's CPU counted once."""

from __future__ import annotations

import subprocess
import sys

from crawling import procstat

# Burns CPU in itself, then in two forked children it reaps: its rusage holds all three.
FORKING = """
import os
def burn():
    total = 0
    for i in range(3_000_000):
        total += i * i % 7
burn()
children = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        burn()
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""


def test_a_settled_parent_holds_its_reaped_childrens_cpu_and_they_are_not_counted_again():
    sampler = procstat.Sampler("postgresql://unused", None)
    process = subprocess.Popen([sys.executable, "-c", FORKING])
    sampler.watch(process.pid)
    usage = procstat.wait_with_usage(process)
    sampler.settle("ours", process.pid, usage)
    sampler.stop()

    ours = sampler.groups["ours"]
    assert ours.cpu == usage.cpu
    assert ours.system == usage.system
    children = [pid for pid in ours.processes if pid != process.pid]
    assert children  # the children were seen (for their peak RSS) ...
    assert all(ours.processes[pid].in_ancestor for pid in children)  # ... but their CPU is the parent's figure
