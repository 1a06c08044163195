"""What the demo sets up before it crawls: the admin account, the outbound allowance, the demo site and its source."""

from __future__ import annotations

import ipaddress
import secrets
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model

from catalog.models import Source
from console.control import sites, source_changes
from demo.site import DemoSite, start_demo_site

DEMO_SOURCE_ID = "demo"
# A catalog a newcomer can crawl on a laptop in seconds and analyse in the background in a few minutes.
DEMO_CHAPTERS = (2, 4)
DEMO_PAGES = (2, 4)


def ensure_admin() -> str:
    """Create the admin account once; returns how to sign in (never a stored password on re-runs)."""
    user_model = get_user_model()
    username = settings.DEMO_ADMIN_USER
    password = settings.DEMO_ADMIN_PASSWORD
    user = user_model.objects.filter(username=username).first()
    if user is None:
        generated = not password
        password = password or secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username, f"{username}@localhost", password)
        shown = password if generated else "(from DEMO_ADMIN_PASSWORD)"
        return f"user {username!r}, password {shown}"
    if password:
        user.set_password(password)
        user.save(update_fields=["password"])
        return f"user {username!r}, password from DEMO_ADMIN_PASSWORD"
    return f"user {username!r} (existing; `python manage.py changepassword {username}` resets it)"


def allow_demo_site() -> None:
    """The demo site listens on 127.0.0.1, which the outbound rule refuses unless named: name it, for this run only.

    Read at call time by the crawler (`fetch.outbound`); the operator's own allowance is kept beside it.
    """
    demo = ipaddress.ip_network("127.0.0.1/32")
    if demo not in settings.OUTBOUND_ALLOWED_NETWORKS:
        settings.OUTBOUND_ALLOWED_NETWORKS = (*settings.OUTBOUND_ALLOWED_NETWORKS, demo)


def start_site(mangas: int) -> tuple[DemoSite, Source]:
    """Start the demo site and point the demo source at it.

    The port of the previous run is reused when it is free: stored URLs (and
    the metadata fingerprint, which includes the cover URL) then stay valid,
    so a re-run finds everything unchanged.
    """
    row = Source.objects.filter(id=DEMO_SOURCE_ID).first()
    previous_port = (urlsplit(row.base_url).port or 0) if row else 0
    try:
        site = start_demo_site("127.0.0.1", previous_port, mangas=mangas, chapters=DEMO_CHAPTERS, pages=DEMO_PAGES)
    except OSError:  # taken by something else since: any free port
        site = start_demo_site("127.0.0.1", 0, mangas=mangas, chapters=DEMO_CHAPTERS, pages=DEMO_PAGES)
    # The path every change of a source takes (audited, run by the machine's operator), like add_source.
    if row is None:
        row = Source(id=DEMO_SOURCE_ID, name="Demo manga site", kind=Source.Kind.DEMO, base_url=site.base_url)
        sites.add_site(actor=None, row=row, check=False, via="cli")
        return site, row
    changes = {"base_url": site.base_url, "enabled": True}
    return site, source_changes.change_source(actor=None, source_id=row.id, changes=changes, via="cli").source
