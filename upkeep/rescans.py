"""Ask Komga and Kavita to rescan their library after an export wrote to the folder they read.

Komga (its OpenAPI, operation `libraryScan`): `POST /api/v1/libraries/{libraryId}/scan`
with the API key in the `X-API-Key` header; 202 Accepted.
Kavita (its `PluginController.Authenticate` and `LibraryController.Scan`): the API
key is traded for a JWT at `POST /api/Plugin/authenticate?apiKey=…&pluginName=…`
(200, a UserDto whose `token` is the JWT), then
`POST /api/Library/scan?libraryId=N&force=false` with `Authorization: Bearer <token>`; 200.

Every request leaves through the outbound guard (`fetch.pinned`): a server on
the LAN or this machine must be listed in OUTBOUND_ALLOWED_NETWORKS like any
other private target. A failed call is a logged warning naming the server and
what went wrong: the export already stands, and the media server's own
periodic scan will still find the files.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

import httpx
from django.conf import settings

from fetch.errors import FetchError
from fetch.outbound import AddressRefused
from fetch.pinned import GuardedTransport
from upkeep.rescan_config import KAVITA, KOMGA, RescanTarget

logger = logging.getLogger(__name__)

PLUGIN_NAME = "Mangalord"
TIMEOUT_SECS = 15.0


class RescanFailed(Exception):
    """The server did not accept the scan; the message says which server and why (never the key)."""


@dataclass(frozen=True)
class RescanResult:
    target: RescanTarget
    error: str = ""  # empty when the server accepted the scan

    @property
    def ok(self) -> bool:
        return not self.error


def request_rescans(
    targets: Iterable[RescanTarget] | None = None, *, client: httpx.Client | None = None
) -> list[RescanResult]:
    """Ask every target (default: settings.LIBRARY_RESCAN_TARGETS) to scan; failures are logged warnings, never raised."""
    targets = tuple(settings.LIBRARY_RESCAN_TARGETS if targets is None else targets)
    if not targets:
        return []
    owned = client is None
    client = client or httpx.Client(transport=GuardedTransport(), timeout=TIMEOUT_SECS, follow_redirects=False)
    results = []
    try:
        for target in targets:
            try:
                scan(client, target)
            except (RescanFailed, httpx.HTTPError, FetchError, AddressRefused, ValueError) as exc:
                logger.warning("%s library rescan at %s failed: %s", target.server, target.url, exc)
                results.append(RescanResult(target, str(exc) or type(exc).__name__))
            else:
                logger.info("%s library %s asked to rescan", target.server, target.library_id)
                results.append(RescanResult(target))
    finally:
        if owned:
            client.close()
    return results


def scan(client: httpx.Client, target: RescanTarget) -> None:
    if target.server == KOMGA:
        scan_komga(client, target)
    elif target.server == KAVITA:
        scan_kavita(client, target)
    else:
        raise ValueError(f"unknown media server {target.server!r}")


def scan_komga(client: httpx.Client, target: RescanTarget) -> None:
    url = f"{target.url}/api/v1/libraries/{quote(target.library_id, safe='')}/scan"
    response = client.post(url, headers={"X-API-Key": target.api_key})
    _expect(response, (202, 200, 204), target, "KOMGA_SCAN_API_KEY")


def scan_kavita(client: httpx.Client, target: RescanTarget) -> None:
    login = client.post(
        f"{target.url}/api/Plugin/authenticate", params={"apiKey": target.api_key, "pluginName": PLUGIN_NAME}
    )
    _expect(login, (200,), target, "KAVITA_SCAN_API_KEY")
    try:
        token = login.json()["token"]
    except (ValueError, KeyError, TypeError) as exc:
        raise RescanFailed("Kavita's authenticate answer carries no token") from exc
    if not isinstance(token, str) or not token:
        raise RescanFailed("Kavita's authenticate answer carries no token")
    response = client.post(
        f"{target.url}/api/Library/scan",
        params={"libraryId": target.library_id, "force": "false"},
        headers={"Authorization": f"Bearer {token}"},
    )
    _expect(response, (200, 202, 204), target, "KAVITA_SCAN_API_KEY")


def _expect(response: httpx.Response, accepted: tuple[int, ...], target: RescanTarget, key_setting: str) -> None:
    if response.status_code in accepted:
        return
    if response.status_code in (401, 403):
        raise RescanFailed(
            f"HTTP {response.status_code} from {response.request.url.path}: check {key_setting} "
            "(the key of an admin user)"
        )
    if response.status_code in (400, 404):
        raise RescanFailed(
            f"HTTP {response.status_code} from {response.request.url.path}: "
            f"check {target.server.upper()}_SCAN_LIBRARY_ID={target.library_id!r}"
        )
    if response.is_redirect:
        raise RescanFailed(
            f"HTTP {response.status_code} from {response.request.url.path} to {response.headers.get('location', '?')}: "
            f"set {target.server.upper()}_SCAN_URL to the address it points to"
        )
    raise RescanFailed(f"HTTP {response.status_code} from {response.request.url.path}")
