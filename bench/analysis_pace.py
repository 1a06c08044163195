"""analyze_worker against a bare loop over the same local models on the same pages: what the worker adds.

    python bench/analysis_pace.py [--pages 24] [--workers 1] \
        [--database-url postgres://postgres@127.0.0.1:5432/mangalord_bench_analysis_pace]

Renders `--pages` demo-site pages (600x850, PNG/JPEG/WebP mixed, captions in
large type: the pages `bench/analysis_local.py` reads), stores them as `Page`
rows of one chapter in a scratch database (dropped and created, migrated),
and then, one after the other, each in a fresh process:

- **bare loop**: Django set up, `LocalBackend().analyze(path, type)` over the
  stored files in page order, nothing else: the models' own pace here;
- **analyze_worker**: one `analyze_page` job a page enqueued (as a chapter
  download does), then `manage.py analyze_worker --drain --workers W`: lease,
  the analysis row's state changes, the image read through storage, the
  backend, the result written, the ack.

Both load the models once (timed apart). Printed per side: wall time of the
process, the span from the first page finished to the last (pages/s over
that span: the steady pace, start-up and model load excluded), CPU per page
of the process (every thread, from its rusage), and the ratio worker / bare.
Also checked: every page was analysed by the worker and both read the same
captions (the same OCR text on every page).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from decimal import Decimal

import scratch

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/mangalord_bench_analysis_pace"


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def seed(pages: int) -> list[str]:
    """Store `pages` rendered pages as one chapter's Page rows; returns their ids in page order."""
    from django.core.files.base import ContentFile

    from catalog.models import Chapter, Manga, Page, Source
    from demo.site.images import CONTENT_TYPES, render_page

    source = Source.objects.create(id="bench", name="Bench", base_url="http://bench.example")
    manga = Manga.objects.create(title="The Long Road Home")
    chapter = Chapter.objects.create(manga=manga, source=source, source_chapter_key="c1", number=Decimal("1"))
    ids = []
    for index in range(pages):
        fmt = ("png", "jpeg", "webp")[index % 3]
        data = render_page("The Long Road Home", "1", index + 1, fmt)
        row = Page(chapter=chapter, index=index, content_type=CONTENT_TYPES[fmt], bytes=len(data), sha256="0" * 64)
        row.image.save(f"p{index:03d}.{fmt}", ContentFile(data), save=False)
        row.save()
        ids.append(str(row.id))
    return ids


def bare_loop() -> None:
    """Child: the models over the stored pages, in page order; prints one JSON line."""
    scratch.setup_django()
    from analysis.backends.local import MODELS, LocalBackend
    from catalog.models import Page

    pages = list(Page.objects.order_by("index"))
    started = time.perf_counter()
    MODELS.get()
    load = time.perf_counter() - started
    backend = LocalBackend()
    finished, texts = [], {}
    for page in pages:
        result = backend.analyze(page.image.path, page.content_type)
        finished.append(time.perf_counter())
        texts[str(page.id)] = result.ocr_text
    print(json.dumps({"load": load, "finished": finished, "texts": texts}))


def run_bare(env: dict[str, str]) -> dict:
    cpu, started = _child_cpu(), time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child-bare"], env=env, capture_output=True, text=True, check=True
    ).stdout
    wall = time.perf_counter() - started
    report = json.loads(out.strip().splitlines()[-1])
    ends = report["finished"]
    return {"wall": wall, "cpu": _child_cpu() - cpu, "span": ends[-1] - ends[0], "load": report["load"], **report}


def run_worker(env: dict[str, str], workers: int, ids: list[str]) -> dict:
    from analysis.models import PageAnalysis
    from analysis.service import enqueue_for_page
    from catalog.models import Page

    for page in Page.objects.order_by("index"):
        enqueue_for_page(page)
    manage = os.path.join(scratch.REPO_ROOT, "manage.py")
    command = [sys.executable, manage, "analyze_worker", "--drain", "--workers", str(workers)]
    cpu, started = _child_cpu(), time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    rows = list(PageAnalysis.objects.filter(page_id__in=ids))
    done = [r for r in rows if r.state == PageAnalysis.State.DONE and r.analyzed_at is not None]
    ends = sorted(r.analyzed_at for r in done)
    return {
        "wall": wall,
        "cpu": _child_cpu() - cpu,
        "span": (ends[-1] - ends[0]).total_seconds() if ends else 0.0,
        "done": len(done),
        "texts": {str(r.page_id): r.ocr_text for r in done},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=24)
    parser.add_argument("--workers", type=int, default=1, help="analyze_worker --workers")
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--child-bare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_bare:
        bare_loop()
        return
    if args.pages < 3 or args.workers < 1:
        parser.error("--pages must be at least 3 and --workers at least 1")

    media = tempfile.mkdtemp(prefix="analysis-pace-")
    env = dict(
        os.environ,
        DATABASE_URL=args.database_url,
        MEDIA_ROOT=media,
        ANALYSIS_ENABLED="true",
        ANALYSIS_BACKEND="local",
        PYTHONPATH=scratch.REPO_ROOT,
    )
    os.environ.update(MEDIA_ROOT=media, ANALYSIS_ENABLED="false")  # seeding must not enqueue by itself
    scratch.recreate_database(args.database_url)
    scratch.setup_django(args.database_url)
    from django.core.management import call_command

    from analysis.backends.local import model_name

    call_command("migrate", verbosity=0)
    ids = seed(args.pages)
    bare = run_bare(env)
    worker = run_worker(env, args.workers, ids)
    scratch.drop_database(args.database_url)

    n = args.pages
    print(f"backend: local, {model_name()}; {n} demo pages 600x850; cores {os.cpu_count()}")
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"model load (bare loop's process): {bare['load']:.2f} s")
    print(f"\n| {n} pages | pages/s (steady) | span s | wall s | CPU per page |")
    print("|---|---:|---:|---:|---:|")
    for name, side in (("bare loop", bare), (f"analyze_worker --workers {args.workers}", worker)):
        pace = (n - 1) / side["span"] if side["span"] else 0.0
        side["pace"] = pace
        print(f"| {name} | {pace:.2f} | {side['span']:.1f} | {side['wall']:.1f} | {side['cpu'] / n * 1000:.0f} ms |")
    ratio = bare["pace"] / worker["pace"] if worker["pace"] else float("inf")
    print(f"\nanalyze_worker takes {ratio:.2f}x the bare loop's time a page (target <= 1.2x)")
    same = sum(1 for page_id, text in bare["texts"].items() if worker["texts"].get(page_id) == text)
    print(f"checked: {worker['done']} of {n} pages analysed by the worker; same OCR text on {same} of {n}")
    if worker["done"] != n:
        sys.exit(1)


if __name__ == "__main__":
    main()
