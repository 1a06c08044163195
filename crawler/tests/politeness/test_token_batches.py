"""A fast source's tokens taken a few at a time: one statement for several requests, and the bound still holds."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from crawler.models import SourceThrottle
from crawler.politeness.limiter import SourceLimiter
from crawler.politeness.slots import HeldTokens
from sources.politeness.rules import BATCH_TOKENS, HOLD_SECS, Politeness, Verdict, batch_reserve

pytestmark = [pytest.mark.django_db(transaction=True)]
postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="the batch statement is PostgreSQL's")

FAST = Politeness(rate_limit=40, burst=16, max_concurrency=8)  # reserve 4 tokens: a quarter of the burst


@pytest.mark.parametrize(
    ("policy", "reserve"),
    [
        (Politeness(rate_limit=2, burst=2), None),  # a polite source: a statement a request, its whole burst
        (Politeness(rate_limit=5, burst=100), None),  # under a token a hold: nothing to batch
        (Politeness(rate_limit=20, burst=4), None),  # the reserve would eat half the burst
        (Politeness(rate_limit=20, burst=8), 2.0),
        (FAST, 4.0),
        (Politeness(rate_limit=1000, burst=1000), 100.0),  # the benchmark's lifted limits
    ],
)
def test_which_sources_take_tokens_in_batches_and_what_they_leave(policy, reserve):
    assert batch_reserve(policy) == reserve


def test_held_tokens_are_spent_until_their_hold_ends_then_dropped():
    now = [0.0]
    held = HeldTokens(clock=lambda: now[0])
    held.keep("s", 2, until=HOLD_SECS)
    assert [held.take("s"), held.take("s"), held.take("s")] == [True, True, False]
    held.keep("s", 5, until=now[0] + HOLD_SECS)
    now[0] += HOLD_SECS
    assert held.take("s") is False  # the hold is over: the rest is never sent


@postgres_only
def test_one_statement_serves_a_batch_of_a_fast_sources_requests_and_leaves_the_reserve():
    SourceThrottle.objects.create(source_id="fast")  # a bucket never used: full
    gate = SourceLimiter("fast", FAST)
    with CaptureQueriesContext(connection) as queries:
        granted = [gate.try_acquire(slot=False).decision.granted for _ in range(BATCH_TOKENS)]
    assert granted == [True] * BATCH_TOKENS
    assert len([q for q in queries if "FOR UPDATE" in q["sql"]]) == 1
    assert SourceThrottle.objects.get(source_id="fast").tokens == pytest.approx(16 - 8, abs=0.5)
    for _ in range(4):  # the next batches can only take what lies above the reserve
        gate.try_acquire(slot=False)
        assert SourceThrottle.objects.get(source_id="fast").tokens >= 4.0 - 1e-9


@postgres_only
def test_a_cooldown_drops_the_tokens_this_process_holds():
    gate = SourceLimiter("fast", FAST)
    assert gate.try_acquire(slot=False).decision.granted  # seven more held
    gate.cool_down(30, "answered 429")
    assert gate.try_acquire(slot=False).decision.verdict is Verdict.COOLING


CHILD = """
import json, time
from crawler.politeness.limiter import SourceLimiter
from sources.politeness.rules import Politeness
gate = SourceLimiter("fast", Politeness(rate_limit={rate}, burst={burst}, max_concurrency=8))
sent, deadline = [], time.time() + {secs}
while time.time() < deadline:
    gate.acquire(slot=False)
    sent.append(time.time())
print(json.dumps(sent))
"""


def _most_in_any_window(times: list[float], rate: float, burst: int) -> float:
    """The largest excess of requests over `burst + rate x T` in any window [times[i], times[j]]."""
    worst = float("-inf")
    for i in range(len(times)):
        for j in range(i, len(times)):
            worst = max(worst, (j - i + 1) - (burst + rate * (times[j] - times[i])))
    return worst


@postgres_only
@pytest.mark.process
def test_two_processes_taking_batches_never_send_more_than_the_bucket_allows(child_env, manage_cmd):
    rate, burst, secs = FAST.rate_limit, FAST.burst, 2.0
    code = CHILD.format(rate=rate, burst=burst, secs=secs)
    children = [
        subprocess.Popen([*manage_cmd, "shell", "-c", code], env=child_env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    started = time.time()
    sent = sorted(t for child in children for t in json.loads(child.communicate(timeout=60)[0].splitlines()[-1]))
    assert len(sent) >= rate * secs * 0.6, "the two processes hardly sent anything"
    assert sent[0] >= started
    # Exactly the token bucket's bound on the requests as sent, both processes together.
    assert _most_in_any_window(sent, rate, burst) <= 1e-6
