"""Peak memory of one page resize in the web process: the old full decode vs `reader.images.render`.

    python bench/resize_memory.py [--megapixels 50] [--width 800]

Writes a page of `--megapixels` (a 3:4 scan with drawn panels and text-like
noise) as JPEG and as PNG into a temp folder, then, each in a fresh child
process, resizes it to `--width` the way the reader did before (open, load
the whole image, LANCZOS resize) and the way it does now (`render`:
`Image.thumbnail` with the JPEG decoder's draft scaling and `reduce`). Each
child reports its RSS before the resize and its peak RSS (VmHWM) after; the
difference is what one resize adds to the web process.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile

from PIL import Image, ImageDraw

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = r"""
import io, sys
sys.path.insert(0, {repo!r})
from PIL import Image
Image.MAX_IMAGE_PIXELS = None
from reader.images import render

def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) // 1024
path, mode, width = sys.argv[1], sys.argv[2], int(sys.argv[3])
before = rss("VmRSS:")
if mode == "before":
    with Image.open(path) as image:
        image.load()
        height = round(image.height * width / image.width)
        small = image.resize((width, height), Image.Resampling.LANCZOS)
        out = io.BytesIO(); small.save(out, image.format)
else:
    fmt = "image/jpeg" if path.endswith(".jpg") else "image/png"
    with open(path, "rb") as handle:
        render(handle, width, fmt)
print(before, rss("VmHWM:"))
"""


def make_page(megapixels: float, folder: str) -> dict[str, str]:
    width = int((megapixels * 1_000_000 * 3 / 4) ** 0.5)
    height = int(width * 4 / 3)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    rng = random.Random(1)
    for _ in range(12):
        x, y = rng.randrange(width - 400), rng.randrange(height - 400)
        draw.rectangle((x, y, x + rng.randrange(200, 2000), y + rng.randrange(200, 2000)), outline=0, width=12)
    for _ in range(3000):
        x, y = rng.randrange(width - 60), rng.randrange(height - 20)
        draw.text((x, y), "ABC", fill=rng.randrange(80))
    rgb = page.convert("RGB")
    paths = {"jpeg": os.path.join(folder, "page.jpg"), "png": os.path.join(folder, "page.png")}
    rgb.save(paths["jpeg"], "JPEG", quality=90)
    rgb.save(paths["png"], "PNG", compress_level=1)
    print(f"page: {width}x{height} ({width * height / 1e6:.1f} MP), "
          + ", ".join(f"{k} {os.path.getsize(p) / 1e6:.1f} MB" for k, p in paths.items()))  # fmt: skip
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megapixels", type=float, default=50)
    parser.add_argument("--width", type=int, default=800)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="resize-bench-") as folder:
        paths = make_page(args.megapixels, folder)
        code = CHILD.format(repo=REPO_ROOT)
        for kind, path in paths.items():
            for mode in ("before", "after"):
                done = subprocess.run(
                    [sys.executable, "-c", code, path, mode, str(args.width)],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                base, peak = map(int, done.stdout.split())
                label = "full decode + resize" if mode == "before" else "render (draft/reduce)"
                print(f"{kind:5} {mode:6} {label:24} adds {peak - base:5d} MB (RSS {base} -> peak {peak} MB)")


if __name__ == "__main__":
    main()
