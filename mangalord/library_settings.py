"""The settings of keeping the library whole and telling people: media-server rescans, the verify pass, notifications.

Read from the environment like every setting (`mangalord.env_readers`) and made part of the settings by
`mangalord/settings.py`, which imports every name here; kept apart so the project's settings stay one
screenful per concern. Each is documented in `.env.example`.
"""

import os
import re

from mangalord.env_readers import env, non_negative, positive, read
from upkeep.rescan_config import rescan_targets

# --- Library upkeep (upkeep/) -------------------------------------------------------
# Komga/Kavita rescans after `export_cbz` writes (upkeep.rescan_config): URL, API key and library id per
# server, all three or none; the servers' addresses pass the outbound guard (OUTBOUND_ALLOWED_NETWORKS for the LAN).
LIBRARY_RESCAN_TARGETS = rescan_targets(os.environ)
# The folder `export_cbz` writes for the media servers: the verify pass checks its files against their chapters.
LIBRARY_EXPORT_DIR = read("LIBRARY_EXPORT_DIR", env.str, "")
# Pages whose bytes `verify` hashes per run when not --full (every page's file is checked for presence).
VERIFY_SAMPLE_PAGES = non_negative("VERIFY_SAMPLE_PAGES", 200)
# A stored file younger than this is never an orphan: a download stores files before the rows that name them.
VERIFY_ORPHAN_GRACE_SECS = non_negative("VERIFY_ORPHAN_GRACE_SECS", 3600)

# --- Notifications (Apprise) ----------------------------------------------------------
# The web app's address as users open it: digests link each chapter to {NOTIFY_PUBLIC_URL}/read/<id>/.
NOTIFY_PUBLIC_URL = read(
    "NOTIFY_PUBLIC_URL",
    env.str,
    "http://localhost:8000",
    lambda v: bool(re.match(r"^https?://[^/\s]+(/[^\s]*)?$", v)),
    "must be the web app's http(s) URL, such as https://manga.example.com",
)
# Seconds between digest passes in `manage.py notify_worker`: each pass sends a user at most one digest.
NOTIFY_DIGEST_INTERVAL = positive("NOTIFY_DIGEST_INTERVAL", 900)
# Seconds after a series' first crawl during which its chapters count as backlog (one summary line, not a list).
NOTIFY_BACKLOG_WINDOW = non_negative("NOTIFY_BACKLOG_WINDOW", 86400)
# Attempts at one notification (retried with the queue's backoff) before it is dead-lettered.
NOTIFY_SEND_MAX_ATTEMPTS = positive("NOTIFY_SEND_MAX_ATTEMPTS", 5)
# Notification URLs one user may keep.
NOTIFY_MAX_TARGETS_PER_USER = positive("NOTIFY_MAX_TARGETS_PER_USER", 10)
# Seconds between source health checks in `manage.py notify_worker`.
NOTIFY_HEALTH_INTERVAL = positive("NOTIFY_HEALTH_INTERVAL", 60)
# A source's jobs settled in the last NOTIFY_HEALTH_WINDOW seconds: "mostly dead" when at least
# NOTIFY_DEAD_JOBS_MIN of them are and they are the majority; "unreachable" when that many failed and none succeeded.
NOTIFY_HEALTH_WINDOW = positive("NOTIFY_HEALTH_WINDOW", 3600)
NOTIFY_DEAD_JOBS_MIN = positive("NOTIFY_DEAD_JOBS_MIN", 5)
