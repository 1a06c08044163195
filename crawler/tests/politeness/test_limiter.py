"""The database limiter: atomic token grants, slot limits and expiry, the shared cooldown, and the adapter's use of it."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.db import close_old_connections, connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.models import Source
from crawler.factory import get_source
from crawler.models import SourceSlot, SourceThrottle
from crawler.payloads import SyncChapterContent
from crawler.politeness import limiter
from crawler.politeness.limiter import SourceLimiter
from crawler.politeness.slots import busy_sources
from demo.site.throttle import ServerThrottle
from jobs import queue
from jobs.errors import JobCancelled
from jobs.models import Job, JobState
from jobs.tests.test_worker_loop import make_worker, wait_for_in_flight
from sources.errors import SourceBusy, SourceCoolingDown, SourceUnavailable
from sources.politeness.rules import Politeness, Verdict

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_ok]

SLOW = Politeness(rate_limit=0.01, burst=5, max_concurrency=64)  # five tokens, then nothing for 100 s


@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent connections race on PostgreSQL")
def test_concurrent_acquirers_never_share_a_token():
    SourceLimiter("s", SLOW).try_acquire(slot=False)  # create the row, four tokens left
    start = threading.Barrier(20)
    grants: list[bool] = []

    def grab() -> None:
        try:
            start.wait()
            grants.append(SourceLimiter("s", SLOW).try_acquire(slot=False).decision.granted)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=grab) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(grants) == [False] * 16 + [True] * 4


def test_a_new_source_starts_with_a_full_bucket_then_waits_for_the_rate():
    gate = SourceLimiter("s", Politeness(rate_limit=2.0, burst=2, max_concurrency=8))
    assert [gate.try_acquire(slot=False).decision.granted for _ in range(3)] == [True, True, False]
    waiting = gate.try_acquire(slot=False).decision
    assert waiting.verdict is Verdict.WAIT_TOKEN and 0 < waiting.wait_secs <= 0.5


def test_acquire_sleeps_until_the_next_token_not_in_a_hot_loop(monkeypatch):
    gate = SourceLimiter("s", Politeness(rate_limit=5.0, burst=1, max_concurrency=8))
    gate.acquire(slot=False)
    sleeps: list[float] = []
    real_sleep = gate._sleep
    monkeypatch.setattr(gate, "_sleep", lambda secs: (sleeps.append(secs), real_sleep(secs)))
    started = time.monotonic()
    gate.acquire(slot=False)
    assert 0.15 <= time.monotonic() - started < 1.0
    assert len(sleeps) <= 2 and 0.1 < sleeps[0] <= 0.2  # one computed sleep, ~1/rate


def test_max_concurrency_counts_slots_in_flight_and_a_release_frees_one():
    gate = SourceLimiter("s", Politeness(rate_limit=100, burst=10, max_concurrency=2))
    first, second = gate.acquire(), gate.acquire()
    assert gate.try_acquire().decision.verdict is Verdict.WAIT_SLOT
    first.release()
    third = gate.try_acquire()
    assert third.decision.granted
    assert third.held is first  # the released row, reused: no new slot
    for held in (second, third.held):
        assert held is not None
        held.release()
    assert SourceSlot.objects.count() == 1  # kept for the adapter's next request, still counted
    gate.close()
    assert SourceSlot.objects.count() == 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement grant is PostgreSQL's")
def test_a_request_on_a_kept_slot_costs_one_statement():
    gate = SourceLimiter("s", Politeness(rate_limit=0.01, burst=10, max_concurrency=2))
    gate.acquire().release()  # the first request inserts the slot row
    with CaptureQueriesContext(connection) as queries:
        held = gate.acquire()
        held.release()
    assert len(queries) == 1 and "FOR UPDATE" in queries[0]["sql"]
    assert SourceThrottle.objects.get(source_id="s").tokens == pytest.approx(8, abs=0.01)  # two tokens taken


def test_a_slot_kept_idle_by_one_adapter_serves_another_of_the_same_process():
    policy = Politeness(rate_limit=100, burst=10, max_concurrency=1)
    first, second = SourceLimiter("s", policy), SourceLimiter("s", policy)
    first.acquire().release()
    held = second.acquire()  # max_concurrency 1: only the kept row lets it through
    held.release()
    first.close()
    assert SourceSlot.objects.count() == 1  # the second adapter is still open
    second.close()
    assert SourceSlot.objects.count() == 0


def test_a_kept_slot_that_expired_is_not_used():
    gate = SourceLimiter("s", Politeness(rate_limit=100, burst=10, max_concurrency=1))
    held = gate.acquire()
    held.release()
    held._renewed -= held.ttl.total_seconds()  # idle past its TTL: another worker may have its share now
    SourceSlot.objects.filter(id=held.id).update(expires_at=timezone.now() - timedelta(seconds=1))
    fresh = gate.try_acquire()
    assert fresh.decision.granted and fresh.held is not held
    assert list(SourceSlot.objects.values_list("id", flat=True)) == [fresh.held.id]


def test_a_jobs_limiter_gives_its_thread_back_when_other_jobs_have_every_slot():
    policy = Politeness(rate_limit=100, burst=10, max_concurrency=1)
    other_job = SourceLimiter("s", policy)
    other_job.acquire()  # held by a job of another process
    gate = SourceLimiter("s", policy, yield_when_busy=True)
    started = time.monotonic()
    with pytest.raises(SourceBusy, match="source 's' is busy with other jobs"):
        gate.acquire()
    assert time.monotonic() - started < 0.5  # no wait for the slot
    assert busy_sources() == {"s"}
    waiting = SourceLimiter("s", policy, max_wait_secs=0.3)  # not a job's: it waits, as before
    with pytest.raises(SourceUnavailable):
        waiting.acquire()


def test_a_new_job_gives_way_at_once_when_another_job_here_spends_the_tokens():
    policy = Politeness(rate_limit=20, burst=1, max_concurrency=8)
    running = SourceLimiter("s", policy)
    running.acquire(slot=False)  # the bucket is empty for 50 ms: one token interval, a lone job's own pace
    newcomer = SourceLimiter("s", policy, yield_when_busy=True)
    with pytest.raises(SourceBusy, match="wait_token"):
        newcomer.acquire()
    newcomer.close()
    running.close()
    alone = SourceLimiter("s", policy, yield_when_busy=True)
    alone.acquire(slot=False)
    alone.acquire(slot=False)  # alone on the source it waits its interval instead


def test_a_started_job_that_gives_way_keeps_its_sources_busy_mark_when_it_closes():
    policy = Politeness(rate_limit=100, burst=10, max_concurrency=1)
    other_job = SourceLimiter("s", policy)
    gate = SourceLimiter("s", policy, yield_when_busy=True)
    gate.acquire().release()  # started: one request out
    held = other_job.acquire()  # its slot kept idle here went to a job of this process; now it is in use
    with pytest.raises(SourceBusy):
        gate.acquire()
    gate.close()
    assert busy_sources() == {"s"}  # else this worker would lease the source's next job at once
    held.release()


def test_the_job_that_had_a_source_ends_its_busy_mark_here():
    policy = Politeness(rate_limit=100, burst=10, max_concurrency=1)
    serving = SourceLimiter("s", policy)
    held = serving.acquire()
    with pytest.raises(SourceBusy):
        SourceLimiter("s", policy, yield_when_busy=True).acquire()
    assert busy_sources() == {"s"}
    held.release()
    serving.close()
    assert busy_sources() == set()


def test_a_slot_left_by_a_killed_worker_expires_and_is_cleared():
    gate = SourceLimiter("s", Politeness(rate_limit=100, burst=10, max_concurrency=1))
    leaked = gate.acquire()  # never released: its process was kill -9'd
    assert gate.try_acquire().decision.verdict is Verdict.WAIT_SLOT
    SourceSlot.objects.filter(id=leaked.id).update(expires_at=timezone.now() - timedelta(seconds=1))
    fresh = gate.try_acquire()
    assert fresh.decision.granted
    assert list(SourceSlot.objects.values_list("id", flat=True)) == [fresh.held.id]


def test_keep_alive_extends_a_streaming_slot(settings):
    held = SourceLimiter("s", SLOW).acquire()
    before = SourceSlot.objects.get(id=held.id).expires_at
    held._renewed -= held.ttl.total_seconds()  # a third of the TTL has long passed
    held.keep_alive()
    assert SourceSlot.objects.get(id=held.id).expires_at > before


def test_a_full_slot_table_gives_up_as_an_outage_after_max_wait():
    gate = SourceLimiter("s", Politeness(rate_limit=100, burst=10, max_concurrency=1), max_wait_secs=0.3)
    gate.acquire()
    with pytest.raises(SourceUnavailable, match="no request slot within"):
        gate.acquire()


def test_the_jobs_cancel_event_interrupts_a_wait():
    cancel = threading.Event()
    gate = SourceLimiter("s", Politeness(rate_limit=0.01, burst=1, max_concurrency=8), cancel=cancel)
    gate.acquire(slot=False)
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(JobCancelled):
        gate.acquire(slot=False)
    assert time.monotonic() - started < 2.0


# --- cooldown ------------------------------------------------------------------------------


def test_a_cooldown_is_seen_by_every_limiter_of_the_source_and_no_other(settings):
    settings.CRAWLER_COOLDOWN_WAIT_SECS = 5
    until = SourceLimiter("s", SLOW).cool_down(30, "http://site/x answered 429 (Retry-After '30')")
    other_worker = SourceLimiter("s", SLOW)
    attempt = other_worker.try_acquire()
    assert attempt.decision.verdict is Verdict.COOLING and attempt.cooling_until == until
    with pytest.raises(SourceCoolingDown) as caught:
        other_worker.acquire()
    assert caught.value.until == until and caught.value.source_id == "s"
    assert "cooling down until" in str(caught.value) and "answered 429" in str(caught.value)
    assert SourceLimiter("t", SLOW).try_acquire().decision.granted
    assert limiter.cooling_sources() == {"s"}
    [entry] = limiter.cooling_status()
    assert entry == {
        "source_id": "s",
        "until": until.isoformat(),
        "reason": "http://site/x answered 429 (Retry-After '30')",
    }


def test_a_short_cooldown_is_waited_out_then_eases_back_in_with_one_token(settings):
    settings.CRAWLER_COOLDOWN_WAIT_SECS = 5
    gate = SourceLimiter("s", Politeness(rate_limit=1.0, burst=5, max_concurrency=8))
    gate.cool_down(0.5, "answered 429")
    started = time.monotonic()
    gate.acquire(slot=False)
    assert time.monotonic() - started >= 0.45
    # One token at the end of the cooldown, not the full burst of five.
    assert gate.try_acquire(slot=False).decision.verdict is Verdict.WAIT_TOKEN


def test_a_later_cooldown_never_shortens_an_earlier_longer_one():
    gate = SourceLimiter("s", SLOW)
    long_end = gate.cool_down(60, "first")
    assert gate.cool_down(1, "second") == long_end
    assert SourceThrottle.objects.get(source_id="s").cooling_until == long_end


def test_a_worker_leases_no_job_of_a_cooling_source():
    worker = make_worker(lambda payload, ctx: None)
    try:
        for source_id in ("cool", "warm"):
            queue.enqueue(SyncChapterContent(source_id=source_id, chapter_id=uuid.uuid4(), source_chapter_key="k"))
        SourceLimiter("cool", SLOW).cool_down(60, "answered 429")
        assert worker.step() is True
        assert [lease.payload.source_id for lease in worker.running_jobs()] == ["warm"]
        assert worker.step() is False  # the cooling source's job stays pending
    finally:
        worker.shutdown(grace_secs=2)


def test_a_job_whose_source_is_busy_gives_its_thread_to_another_sources_job():
    policy = Politeness(rate_limit=100, burst=10, max_concurrency=1)
    ran: list[str] = []

    def download(payload, ctx) -> None:
        gate = SourceLimiter(payload.source_id, policy, cancel=ctx.cancel, yield_when_busy=True)
        try:
            gate.acquire().release()
        finally:
            gate.close()
        ran.append(payload.source_id)

    another_process = SourceLimiter("busy", policy).acquire()  # the busy source's only slot, in use elsewhere
    worker = make_worker(download, concurrency=1)
    try:
        jobs = {
            source_id: queue.enqueue(
                SyncChapterContent(source_id=source_id, chapter_id=uuid.uuid4(), source_chapter_key="k")
            ).id
            for source_id in ("busy", "free")
        }
        deadline = time.monotonic() + 10
        while ran != ["free"]:
            assert time.monotonic() < deadline, "the free source's job never ran"
            worker.step()
            wait_for_in_flight(worker)
        row = Job.objects.get(id=jobs["busy"])
        assert (row.state, row.attempts, row.deferrals) == (JobState.PENDING, 0, 0)  # given back, nothing burnt
        assert "busy" in worker.lease_exclusions()
        assert worker.step() is False and not worker.running_jobs()  # not leased again while its source is busy
    finally:
        another_process.release()
        worker.shutdown(grace_secs=2)


# --- the adapter ----------------------------------------------------------------------------


@pytest.fixture
def limited_source(demo_site):
    return Source.objects.create(
        id="demo",
        name="Demo",
        kind=Source.Kind.DEMO,
        base_url=demo_site.base_url,
        settings={"rate_limit": 50, "burst": 5, "max_concurrency": 2},
    )


def test_a_429_cools_the_source_down_and_later_requests_never_reach_the_site(demo_site, limited_source, settings):
    settings.CRAWLER_COOLDOWN_WAIT_SECS = 0
    demo_site.throttle = ServerThrottle(always=True, retry_after_secs=30)
    with pytest.raises(SourceCoolingDown) as caught:
        get_source(limited_source).list_page(1)
    assert 29 <= (caught.value.until - timezone.now()).total_seconds() <= 31
    assert "answered 429 (Retry-After '30')" in str(caught.value)
    assert limiter.cooling_sources() == {"demo"}

    source = get_source(limited_source)
    with pytest.raises(SourceCoolingDown):
        source.open_image(demo_site.url("/img/covers/x.png"))
    assert len(demo_site.throttle.arrivals) == 1  # the second request never went out
    source.close()
    assert SourceSlot.objects.count() == 1  # the first adapter's, until it closes: nothing else stays held


def test_a_429_as_an_http_date_cools_down_until_that_date(demo_site, limited_source, settings):
    settings.CRAWLER_COOLDOWN_WAIT_SECS = 0
    demo_site.throttle = ServerThrottle(always=True, retry_after_secs=20, http_date=True)
    with pytest.raises(SourceCoolingDown) as caught:
        get_source(limited_source).list_page(1)
    assert 18 <= (caught.value.until - timezone.now()).total_seconds() <= 21


def test_a_bare_503_is_an_outage_not_a_cooldown(demo_site, limited_source):
    demo_site.faults.outage = True
    with pytest.raises(SourceUnavailable):
        get_source(limited_source).list_page(1)
    assert limiter.cooling_sources() == set()


def test_an_adapter_keeps_one_slot_between_its_requests_and_gives_it_back_when_it_closes(demo_site, limited_source):
    source = get_source(limited_source)
    refs, _ = source.list_page(1)
    detail = source.manga_detail(refs[0])
    source.chapter_pages(detail.chapters[0])
    stream = source.open_image(detail.cover_url)
    assert SourceSlot.objects.count() == 1  # held while the image streams, the same row for every request
    b"".join(stream.iter_bytes())
    stream.close()
    assert SourceSlot.objects.count() == 1
    source.close()
    assert SourceSlot.objects.count() == 0
    assert SourceThrottle.objects.get(source_id="demo").refilled_at is not None
