"""Steer a demo site running in another process through its control routes."""

from __future__ import annotations

from typing import Any

import httpx


def _post(base_url: str, route: str, body: dict[str, Any]) -> Any:
    response = httpx.post(f"{base_url.rstrip('/')}/__control/{route}", json=body, timeout=10)
    if response.status_code != 200:
        raise ValueError(f"demo site refused {route}: {response.json().get('error', response.text)}")
    return response.json()


def set_faults(base_url: str, **faults: Any) -> dict[str, Any]:
    """Switch faults on a remote demo site, e.g. `set_faults(url, outage=True)`; returns every fault."""
    if "detail_404" in faults:
        faults["detail_404"] = sorted(faults["detail_404"])
    return _post(base_url, "faults", faults)


def reset_faults(base_url: str) -> dict[str, Any]:
    return _post(base_url, "reset", {})


def mutate_catalog(base_url: str, action: str, **kwargs: Any) -> Any:
    """`action` is add_manga, add_chapter, remove_chapter or update_manga (keyword arguments as on DemoSite)."""
    return _post(base_url, "catalog", {"action": action, **kwargs})["result"]
