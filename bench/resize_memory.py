"""Peak memory of one page resize in the web process, per stored type: the old Pillow paths vs `reader.images`.

    python bench/resize_memory.py [--megapixels 50] [--width 800] [--types jpeg,png,webp,gif,avif]

Writes a page of `--megapixels` (a 3:4 scan with drawn panels and text-like
noise) as JPEG, PNG, WebP, GIF and AVIF into a temp folder. GIF and AVIF
decoders hold the whole frame, so the ingest check refuses those types over
the decode budget (IMAGE_DECODE_BUDGET_MB); for them the page is also written
at the largest size the budget lets in. Each page is then resized to
`--width`, each time in a fresh child process, three ways:

- `full`: what the reader first did (Pillow: load the whole image, LANCZOS resize);
- `draft`: Pillow's `Image.thumbnail` with the JPEG decoder's draft scaling and `reduce`;
- `vips`: `reader.images.render` now (libvips: shrink-on-load, strips, the decode budget).

plus `libvips, no width`: the same call with no width (a PSE client that
gives no maxWidth and is sent a converted page), and the decode check every
page passes when stored, as it was (Pillow: a JPEG at 1/8 scale, the rest
whole) and as it is now (`catalog.storage`: the header, the pixel cap, the
decode budget, then a libvips decode into a 64-pixel box; "refused" when the
budget refuses the page). Each child reports
its RSS before the work and its peak RSS (VmHWM) after; the difference is
what one resize adds to the process.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile

import pyvips
from PIL import Image, ImageDraw

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = r"""
import io, os, sys
sys.path.insert(0, {repo!r})
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")
import django
django.setup()
from PIL import Image
Image.MAX_IMAGE_PIXELS = None
from catalog.errors import ImageRejected
from catalog.image_checks import checked_size
from reader.images import render

def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) // 1024
path, mode, width = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = path + ".out.jpg"
before = rss("VmRSS:")
if mode == "full":
    with Image.open(path) as image:
        image.load()
        small = image.resize((width, round(image.height * width / image.width)), Image.Resampling.LANCZOS)
        small.convert("RGB").save(io.BytesIO(), "JPEG")
elif mode == "draft":
    with Image.open(path) as image:
        image.thumbnail((width, round(image.height * width / image.width)), Image.Resampling.LANCZOS, reducing_gap=2.0)
        image.convert("RGB").save(io.BytesIO(), "JPEG")
elif mode == "vips":
    render(path, width, "image/jpeg", out)
elif mode == "vips-full-width":
    render(path, None, "image/jpeg", out)
elif mode == "pillow-check":
    with Image.open(path) as image:
        if image.format == "JPEG":
            image.draft(image.mode, (image.width // 8, image.height // 8))
        image.load()
elif mode == "ingest":
    try:
        checked_size(path, "", 10**12)  # no type: the reduced-size decode any image the JPEG walk cannot vouch for gets
    except ImageRejected:
        print("refused")
print(before, rss("VmHWM:"))
"""
MODES = {
    "full": "Pillow full decode",
    "draft": "Pillow draft/reduce",
    "vips": "libvips render",
    "vips-full-width": "libvips, no width",
    "pillow-check": "Pillow ingest check",
    "ingest": "ingest check now",
}
FORMATS = {"jpeg": "jpg", "png": "png", "webp": "webp", "gif": "gif", "avif": "avif"}
# Bytes a pixel the whole-frame decoders hold (catalog.imaging): their pages are capped by the budget.
WHOLE_FRAME = {"gif": 5.4, "avif": 17.0}
BUDGET_MB = 150


def make_scan(megapixels: float) -> Image.Image:
    width = int((megapixels * 1_000_000 * 3 / 4) ** 0.5)
    height = int(width * 4 / 3)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    rng = random.Random(1)
    for _ in range(int(12 * megapixels / 50) + 1):
        x, y = rng.randrange(width - 400), rng.randrange(height - 400)
        draw.rectangle((x, y, x + rng.randrange(200, 2000), y + rng.randrange(200, 2000)), outline=0, width=12)
    for _ in range(int(3000 * megapixels / 50)):
        x, y = rng.randrange(width - 60), rng.randrange(height - 20)
        draw.text((x, y), "ABC", fill=rng.randrange(80))
    return page.convert("RGB")


def write(scan: Image.Image, kind: str, path: str) -> None:
    if kind == "avif":  # libvips's AV1 encoder at its fastest: Pillow's takes minutes at 50 MP
        png = path + ".png"
        scan.save(png, "PNG", compress_level=1)
        pyvips.Image.new_from_file(png).heifsave(path, compression="av1", effort=0, Q=50)
        os.unlink(png)
    else:
        options = {"jpeg": {"quality": 90}, "png": {"compress_level": 1}, "webp": {"quality": 80}}.get(kind, {})
        scan.save(path, kind.upper(), **options)


def measure(path: str, mode: str, width: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(repo=REPO_ROOT), path, mode, str(width)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    words = done.stdout.split()
    added = int(words[-1]) - int(words[-2])
    return f"refused ({added})" if "refused" in words else str(added)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megapixels", type=float, default=50)
    parser.add_argument("--width", type=int, default=800)
    parser.add_argument("--types", default=",".join(FORMATS))
    args = parser.parse_args()
    kinds = args.types.split(",")
    pages: list[tuple[str, float]] = [(kind, args.megapixels) for kind in kinds]
    pages += [(kind, BUDGET_MB * 1024 * 1024 / WHOLE_FRAME[kind] / 1e6) for kind in kinds if kind in WHOLE_FRAME]
    print(f"resize to {args.width} px wide; MB added to the process (peak RSS - RSS before)")
    print(f"{'type':5} {'MP':>5} {'MB file':>7}  " + "  ".join(f"{label:>20}" for label in MODES.values()))
    with tempfile.TemporaryDirectory(prefix="resize-bench-") as folder:
        for kind, megapixels in sorted(pages, key=lambda p: (kinds.index(p[0]), -p[1])):
            path = os.path.join(folder, f"page-{megapixels:.0f}.{FORMATS[kind]}")
            write(make_scan(megapixels), kind, path)
            figures = [measure(path, mode, args.width) for mode in MODES]
            size = os.path.getsize(path) / 1e6
            print(f"{kind:5} {megapixels:5.1f} {size:7.1f}  " + "  ".join(f"{mb:>20}" for mb in figures), flush=True)
            os.unlink(path)


if __name__ == "__main__":
    main()
