"""The crawler's settings: its limits, deadlines, politeness, outbound networks, challenges and Chromium.

Read from the environment like every setting (`mangalord.env_readers`) and made part of the settings by
`mangalord/settings.py`, which imports every name here; kept apart so the project's settings stay one
screenful per concern. Each is documented in `.env.example`.
"""

import re

from mangalord.env_readers import env, networks, non_negative, positive, read
from mangalord.sizes import parse_floor, parse_quota

# --- Crawler -----------------------------------------------------------------
CRAWLER_METADATA_MAX_CONSECUTIVE_FAILURES = positive("CRAWLER_METADATA_MAX_CONSECUTIVE_FAILURES", 5)
CRAWLER_BROWSER_RESTART_THRESHOLD = positive("CRAWLER_BROWSER_RESTART_THRESHOLD", 3)
# Free space kept under MEDIA_ROOT: below it page downloads pause (jobs released, nothing failed) until
# there is room again. Bytes with a unit (5GiB, 500MB) or a share of the disk (5%); 0 turns the guard off.
CRAWLER_MIN_FREE_DISK = read(
    "CRAWLER_MIN_FREE_DISK", lambda name, default: parse_floor(env.str(name, default=default)), "1GiB"
)
# With STORAGE_BACKEND=s3: the bytes of pages the bucket may hold (500GiB, 2TB; 0: no quota). Stored bytes are
# counted from the catalog's page sizes (recounted every CRAWLER_SOURCE_STATS_SECS); page downloads pause when
# what the quota leaves is under CRAWLER_MIN_FREE_DISK (a share is then of the quota), or the quota is reached.
CRAWLER_S3_QUOTA = read("CRAWLER_S3_QUOTA", lambda name, default: parse_quota(env.str(name, default=default)), "0")
# How long the dashboard's per-source figures (chapters by download state, storage used) are reused.
CRAWLER_SOURCE_STATS_SECS = non_negative("CRAWLER_SOURCE_STATS_SECS", 60)
CRAWLER_MAX_IMAGE_BYTES = positive("CRAWLER_MAX_IMAGE_BYTES", 64 * 1024 * 1024)
CRAWLER_MAX_IMAGE_PIXELS = positive("CRAWLER_MAX_IMAGE_PIXELS", 50_000_000)
# Memory one image decode may hold (catalog.imaging): GIF and AVIF pages whose whole frame needs more are refused
# at ingest, and a scaled or converted copy is never wider than its decoder can make within it.
IMAGE_DECODE_BUDGET_MB = positive("IMAGE_DECODE_BUDGET_MB", 150)
CRAWLER_METADATA_INTERVAL = positive("CRAWLER_METADATA_INTERVAL", 3600)
CRAWLER_HTTP_TIMEOUT_SECS = read(
    "CRAWLER_HTTP_TIMEOUT_SECS", env.float, 30.0, lambda v: v > 0, "must be a positive number"
)
# The body of one HTML/JSON page a worker or the web process fetches: larger is refused (a permanent source error).
CRAWLER_MAX_PAGE_BYTES = positive("CRAWLER_MAX_PAGE_BYTES", 8 * 1024 * 1024)
# One page request from first byte sent to last byte read, redirects included, however the site trickles it
# (CRAWLER_HTTP_TIMEOUT_SECS bounds one silent wait); one browser navigation too.
CRAWLER_PAGE_DEADLINE_SECS = read(
    "CRAWLER_PAGE_DEADLINE_SECS", env.float, 60.0, lambda v: v > 0, "must be a positive number"
)
# One image download, from request to last byte (images are up to CRAWLER_MAX_IMAGE_BYTES).
CRAWLER_IMAGE_DEADLINE_SECS = read(
    "CRAWLER_IMAGE_DEADLINE_SECS", env.float, 300.0, lambda v: v > 0, "must be a positive number"
)
# Networks outbound fetches may reach besides the public internet (fetch.outbound): loopback,
# private, link-local and the other non-public addresses are refused unless listed here, e.g.
# 127.0.0.1/32,::1/128 for a site served on this machine, 10.0.0.0/8 for one on the LAN.
OUTBOUND_ALLOWED_NETWORKS = networks("OUTBOUND_ALLOWED_NETWORKS", "")
# Politeness (per-source rate_limit/burst/max_concurrency live in each Source's settings).
# A Retry-After longer than this is read as this: a broken header cannot park a source for days.
CRAWLER_RETRY_AFTER_MAX_SECS = positive("CRAWLER_RETRY_AFTER_MAX_SECS", 3600)
# How long a source cools down after a 429 that names no Retry-After.
CRAWLER_DEFAULT_COOLDOWN_SECS = positive("CRAWLER_DEFAULT_COOLDOWN_SECS", 60)
# A request that finds its source cooling waits this long at most; a longer
# cooldown defers the job instead (no attempt burnt) and frees the worker.
CRAWLER_COOLDOWN_WAIT_SECS = non_negative("CRAWLER_COOLDOWN_WAIT_SECS", 5)
# Idle SSE streams send a keep-alive comment this often (proxies drop silent connections).
CRAWLER_STREAM_KEEPALIVE_SECS = read(
    "CRAWLER_STREAM_KEEPALIVE_SECS", env.float, 15.0, lambda v: v > 0, "must be a positive number"
)
# JavaScript challenges (sources.clearance.records): how long one pass may take (the browser waiting for the
# challenge page to reload into the site, or the solver's maxTimeout), how far apart a source's passes are at
# least (every worker on every host shares them), and an optional FlareSolverr v3 endpoint (its POST /v1) asked
# where the worker's Chromium cannot pass, or no browser runs (the web process's Sources page).
CRAWLER_CHALLENGE_WAIT_SECS = positive("CRAWLER_CHALLENGE_WAIT_SECS", 30)
CRAWLER_CHALLENGE_PASS_INTERVAL_SECS = positive("CRAWLER_CHALLENGE_PASS_INTERVAL_SECS", 300)
CRAWLER_CHALLENGE_SOLVER_URL = read(
    "CRAWLER_CHALLENGE_SOLVER_URL",
    env.str,
    "",
    lambda v: v == "" or re.match(r"^https?://[^/\s]+", v) is not None,
    "must be an http(s) URL of a FlareSolverr endpoint, like http://flaresolverr:8191/v1 (or empty)",
)
# The User-Agent every request to MangaDex carries: MangaDex requires one that names the client (no browser's),
# and asks that it say how to reach whoever runs it; add a contact (a URL or an e-mail) here.
MANGADEX_USER_AGENT = read(
    "MANGADEX_USER_AGENT",
    env.str,
    "Mangalord/1.0 (self-hosted manga library)",
    lambda v: bool(v.strip()) and v.isprintable() and not v.startswith("Mozilla/"),
    "must be a descriptive User-Agent naming this client (not empty, not a browser's Mozilla/...)",
)
CHROMIUM_PATH = read("CHROMIUM_PATH", env.str, "")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
