"""Local analysis backend throughput: pages/s of OCR + NSFW on this machine's CPU.

    python bench/analysis_local.py --pages 20

Renders demo-site chapter pages (the same renderer the demo site serves:
600x850, captions in large type, PNG/JPEG/WebP mixed), loads the models once
(timed separately: a worker pays it once per process) and analyses every page
one after another, as one `analyze_worker` does. Prints model load time,
per-page latency (median, max), CPU time per page and pages/s. No network, no database.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import scratch

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")

FORMATS = ("png", "jpeg", "webp")
TITLES = ("The Long Road Home", "Blue Harbour", "Seven Swords of Dawn", "A Quiet Cafe")


def render_pages(directory: Path, count: int) -> list[tuple[str, str]]:
    from demo.site.images import CONTENT_TYPES, render_page

    pages = []
    for i in range(count):
        fmt = FORMATS[i % len(FORMATS)]
        title = TITLES[i % len(TITLES)]
        path = directory / f"page-{i:03d}.{fmt}"
        path.write_bytes(render_page(title, str(1 + i // 8), 1 + i % 8, fmt))
        pages.append((str(path), CONTENT_TYPES[fmt]))
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20, help="how many pages to analyse")
    args = parser.parse_args()

    scratch.setup_django()
    from analysis.backends.local import MODELS, LocalBackend, model_name

    with tempfile.TemporaryDirectory() as tmp:
        pages = render_pages(Path(tmp), args.pages)
        started = time.perf_counter()
        MODELS.get()
        load_secs = time.perf_counter() - started

        backend = LocalBackend()
        latencies = []
        read_captions = 0
        started, cpu_started = time.perf_counter(), time.process_time()
        for path, content_type in pages:
            t0 = time.perf_counter()
            result = backend.analyze(path, content_type)
            latencies.append(time.perf_counter() - t0)
            read_captions += "CHAPTER" in result.ocr_text and "PAGE" in result.ocr_text
        total, cpu = time.perf_counter() - started, time.process_time() - cpu_started

    print(f"backend: local, {model_name()}")
    print(f"cpu cores: {os.cpu_count()}")
    print(f"model load: {load_secs:.2f} s (once per process)")
    print(f"pages: {len(pages)} demo pages 600x850, captions read on {read_captions}")
    print(f"latency: median {statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms")
    # CPU time says what a page costs even when other work shares the machine.
    print(f"cpu time: {cpu / len(pages) * 1000:.0f} ms per page (all threads)")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(f"throughput: {len(pages) / total:.2f} pages/s")


if __name__ == "__main__":
    main()
