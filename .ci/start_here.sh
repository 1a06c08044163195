#!/usr/bin/env bash
# README's "Start here", as written, on this commit in a fresh directory: a new virtual environment
# from Debian's python3, `pip install -r requirements.txt` into it, then the demo (with --no-serve, so
# it ends after its summary). Prints how long each part took. Needs the network access pip needs.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The block under "## Start here": the apt line (skipped when python3-venv is there), then the one-liner.
block="$(awk '/^## Start here/{s=1} s&&/^```sh/{b=1;next} b&&/^```/{exit} b{print}' "$repo/README.md")"
apt_line="$(grep '^sudo apt-get' <<<"$block" || true)"
run_line="$(grep '^python3 -m venv' <<<"$block")"
[ -n "$run_line" ] || { echo "start_here: no 'python3 -m venv' line under README's Start here" >&2; exit 1; }
if [ -n "$apt_line" ] && ! dpkg -s python3-venv >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then apt_line="${apt_line#sudo }"; fi
  bash -c "$apt_line"
fi

# This commit's files (what a clone holds), no .venv, no data: a newcomer's checkout.
git -C "$repo" archive --format=tar HEAD | tar -x -C "$work"
cd "$work"
started=$(date +%s)
# Debian's python3 first on PATH, a fresh environment with no inherited settings or virtualenv.
env -i HOME="$HOME" PATH="/usr/bin:/bin" LANG=C.UTF-8 \
  bash -c "set -euo pipefail; ${run_line/python manage.py demo/python manage.py demo --no-serve}"
ended=$(date +%s)
echo "start_here: README's Start here passed in $((ended - started)) s; venv $(du -sh .venv | cut -f1)"
