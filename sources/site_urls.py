"""URLs under a site's base URL, which may carry a path: a WordPress installed at `https://example.com/x/`.

A template's leading "/" means the site's root, and the site's root is its
base URL, path included: `/manga/page/2/` under `https://example.com/x` is
`https://example.com/x/manga/page/2/`. Plain `urljoin` would drop the `/x`
(a leading slash is the host's root to it), so sites under a sub-path were
listed at the wrong address.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit


def site_url(base_url: str, target: str) -> str:
    """`target` resolved under `base_url`: absolute URLs stay, "/path" keeps the base path, "path" joins it."""
    if urlsplit(target).scheme or target.startswith("//"):
        return target
    base = base_url.rstrip("/")
    if target.startswith("/"):
        return base + target
    return urljoin(base + "/", target)


def base_path(base_url: str) -> str:
    """The path part of a base URL without its trailing slash: "" for a site at the host's root."""
    return urlsplit(base_url).path.rstrip("/")


def path_under(base_url: str, url: str) -> list[str] | None:
    """The non-empty path segments of `url` below `base_url` (same host), or None when it is elsewhere."""
    base, target = urlsplit(base_url), urlsplit(url)
    if (target.hostname, target.port) != (base.hostname, base.port):
        return None
    prefix = base_path(base_url)
    path = target.path or "/"
    if prefix and not (path == prefix or path.startswith(prefix + "/")):
        return None
    return [segment for segment in path[len(prefix) :].split("/") if segment]


def sibling_api_origin(base_url: str) -> str:
    """The `api.<host>` origin beside a site (same scheme and port): where Iken and HeanCMS sites serve JSON.

    A host that already starts with `www.` gives up that label (`www.example.com` -> `api.example.com`).
    """
    parts = urlsplit(base_url)
    host = (parts.hostname or "").removeprefix("www.")
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://api.{host}{port}"
