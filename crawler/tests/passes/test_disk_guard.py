"""The free-space floor: below CRAWLER_MIN_FREE_DISK page downloads pause, released and never failed."""

from __future__ import annotations

import errno
import subprocess

import pytest

from catalog.disk import Floor, Space, below_floor, parse_floor, pause_reason
from jobs.worker.outcomes import Disposition, disposition
from sources.errors import StorageFull

GIB = 1024**3


@pytest.mark.parametrize(
    ("text", "floor"),
    [
        ("5GiB", Floor(bytes=5 * GIB)),
        ("500 MB", Floor(bytes=500_000_000)),
        ("1.5g", Floor(bytes=int(1.5 * GIB))),
        ("5%", Floor(percent=5.0)),
        ("0", Floor()),
        ("123", Floor(bytes=123)),
    ],
)
def test_parse_floor_reads_bytes_with_units_and_shares(text, floor):
    assert parse_floor(text) == floor


@pytest.mark.parametrize("text", ["", "5x", "-1GiB", "five", "101%", "5 % of disk"])
def test_parse_floor_refuses_what_is_not_a_size(text):
    with pytest.raises(ValueError, match="not a size|at most 100%"):
        parse_floor(text)


def test_below_floor_by_bytes_and_by_share():
    assert below_floor(Space(free=4 * GIB, total=100 * GIB), Floor(bytes=5 * GIB))
    assert not below_floor(Space(free=5 * GIB, total=100 * GIB), Floor(bytes=5 * GIB))
    assert below_floor(Space(free=4 * GIB, total=100 * GIB), Floor(percent=5))
    assert not below_floor(Space(free=6 * GIB, total=100 * GIB), Floor(percent=5))
    assert not below_floor(Space(free=0, total=100 * GIB), Floor())  # 0: the guard is off


def test_pause_reason_names_the_setting_the_space_and_the_place():
    reason = pause_reason(Space(free=GIB, total=100 * GIB), Floor(percent=5), "/srv/media")
    assert reason == (
        "free disk space 1.0 GiB on /srv/media is under CRAWLER_MIN_FREE_DISK (5%: 5.0 GiB); page downloads paused"
    )
    assert pause_reason(Space(free=10 * GIB, total=100 * GIB), Floor(percent=5), "/srv/media") is None


def test_a_full_disk_holds_the_job_instead_of_failing_it():
    assert disposition(StorageFull("under the floor")) is Disposition.HOLD
    assert disposition(OSError(errno.ENOSPC, "No space left on device")) is Disposition.HOLD
    assert disposition(OSError(errno.EACCES, "Permission denied")) is Disposition.RETRY


@pytest.fixture
def workers(child_env, manage_cmd, tmp_path):
    from testsupport.worker_processes import worker_pool

    yield from worker_pool(child_env, manage_cmd, tmp_path)


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_floor_above_free_space_pauses_downloads_with_nothing_failed_and_a_lower_floor_resumes(
    demo_site_factory, workers, settings
):
    from catalog.models import Chapter, Page, Source
    from console.status.compose import compose_status
    from crawler.passes.metadata_pass import run_metadata_pass
    from jobs.models import Job, WorkerStatus
    from jobs.worker.status.handle import StatusHandle
    from testsupport.worker_processes import wait_until

    settings.ANALYSIS_ENABLED = False
    site = demo_site_factory(mangas=1, chapters=(2, 2), pages=(3, 3))
    source = Source.objects.create(id="demo", name="Demo", kind=Source.Kind.DEMO, base_url=site.base_url)
    run_metadata_pass(source, status=StatusHandle())
    content = Job.objects.filter(kind="sync_chapter_content")
    assert content.count() == 2

    worker = workers.start(CRAWLER_MIN_FREE_DISK="100%")  # every disk has less free space than its size
    flag = wait_until(
        lambda: WorkerStatus.objects.filter(pid=worker.pid, flags__storage_paused__isnull=False)
        .values_list("flags__storage_paused", flat=True)
        .first(),
        what="the worker to report paused downloads",
    )
    assert "under CRAWLER_MIN_FREE_DISK (100%" in flag
    wait_until(lambda: "page downloads paused" in worker.log(), what="the pause in the worker's log")
    status = compose_status()["storage"]  # this process's own floor has room: the worker's report says why
    assert status["downloads_paused"] and "CRAWLER_MIN_FREE_DISK" in status["reason"]
    assert list(content.values_list("state", "attempts")) == [("pending", 0), ("pending", 0)]
    assert not Page.objects.exists()
    assert worker.terminate() == 0

    resumed = workers.start("--drain", CRAWLER_MIN_FREE_DISK="0")
    assert resumed.wait(120) == 0
    assert set(content.values_list("state", "attempts")) == {("done", 1)}
    assert Page.objects.count() == 6
    assert set(Chapter.objects.values_list("sync_state", flat=True)) == {"done"}
    assert not Job.objects.filter(state__in=["dead", "failed"]).exists()


def _disk_floor(manage_cmd, child_env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*manage_cmd, "disk_floor", *args], env=child_env, capture_output=True, text=True, timeout=60)


@pytest.mark.process
@pytest.mark.django_db(transaction=True)
def test_an_operator_lowering_the_floor_resumes_the_running_worker_and_raising_it_pauses_it_again(
    demo_site_factory, workers, settings, manage_cmd, child_env
):
    from catalog.models import Page
    from crawler.models import AuditEvent
    from jobs.models import Job
    from testsupport.worker_processes import demo_downloads_queued, storage_paused_flag, wait_until

    settings.ANALYSIS_ENABLED = False
    content = demo_downloads_queued(demo_site_factory)

    def paused_flag():
        return storage_paused_flag(worker.pid)

    worker = workers.start(CRAWLER_MIN_FREE_DISK="100%")  # every disk has less free space than its size
    assert "under CRAWLER_MIN_FREE_DISK (100%" in wait_until(paused_flag, what="the worker to pause downloads")
    assert list(content.values_list("state", "attempts")) == [("pending", 0), ("pending", 0)]

    lowered = _disk_floor(manage_cmd, child_env, "0")
    assert lowered.returncode == 0, lowered.stderr
    assert "disk floor 0 B (set by the operator's floor" in lowered.stdout and "page downloads run" in lowered.stdout
    # The same process, never restarted, downloads everything once it rereads the floor.
    wait_until(lambda: set(content.values_list("state", flat=True)) == {"done"}, 120, what="the downloads")
    assert set(content.values_list("attempts", flat=True)) == {1}
    assert Page.objects.count() == 6
    assert not Job.objects.filter(state__in=["dead", "failed"]).exists()
    assert "resuming page downloads" in worker.log()
    wait_until(lambda: not paused_flag(), what="the worker's paused flag to clear")

    raised = _disk_floor(manage_cmd, child_env, "100%")
    assert raised.returncode == 0, raised.stderr
    assert "under the operator's floor (manage.py disk_floor) (100%" in raised.stdout
    reason = wait_until(paused_flag, what="the worker to pause again")
    assert "the operator's floor (manage.py disk_floor)" in reason
    assert worker.process.poll() is None and worker.terminate() == 0
    audited = AuditEvent.objects.filter(action="set_disk_floor").order_by("created_at")
    assert list(audited.values_list("detail__after", flat=True)) == ["0", "100%"]


@pytest.mark.django_db
def test_a_floor_that_is_not_a_size_is_refused_and_changes_nothing(manage_cmd, child_env):
    from crawler.models import AuditEvent, CrawlerState

    refused = _disk_floor(manage_cmd, child_env, "five gigs")
    assert refused.returncode != 0
    assert "'five gigs' is not a size: write bytes with a unit (5GiB, 500MB) or a share (5%)" in refused.stderr
    both = _disk_floor(manage_cmd, child_env, "5GiB", "--clear")
    assert both.returncode != 0 and "a floor or --clear, not both" in both.stderr
    assert not CrawlerState.objects.filter(key__startswith="storage:").exists()
    assert not AuditEvent.objects.exists()


@pytest.mark.django_db
def test_an_operator_sets_and_clears_the_floor_over_the_api_and_a_bad_one_changes_nothing(operator, settings):
    from crawler.models import AuditEvent
    from crawler.passes.disk_guard import current_floor
    from testsupport import api_factories as f

    settings.CRAWLER_MIN_FREE_DISK = Floor()
    client = f.api_client(operator)
    url = "/api/v1/admin/crawler/disk-floor/"
    paused = f.post_json(client, url, {"floor": "100%"})
    assert paused.status_code == 200, paused.json()
    body = paused.json()
    assert (body["floor"], body["set_by"]) == ("100%", "the operator's floor (manage.py disk_floor)")
    assert "page downloads paused" in body["downloads_paused"]

    refused = f.post_json(client, url, {"floor": "lots"})
    assert refused.status_code == 400
    assert "'lots' is not a size" in str(refused.json()["floor"])
    assert current_floor() == (Floor(percent=100.0), "the operator's floor (manage.py disk_floor)")

    cleared = f.post_json(client, url, {"floor": None}).json()
    assert (cleared["floor"], cleared["set_by"], cleared["downloads_paused"]) == ("0 B", "CRAWLER_MIN_FREE_DISK", None)
    audited = AuditEvent.objects.filter(action="set_disk_floor").order_by("created_at")
    assert list(audited.values_list("detail__after", flat=True)) == ["100%", None]
    assert set(audited.values_list("actor", flat=True)) == {operator.id}
