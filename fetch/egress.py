"""How every transport leaves this machine: the proxy a URL goes through and the CAs a TLS answer must chain to.

httpx (pages), libcurl (images) and the requests made beside them each had
their own reading of the environment, kept in step by hand. Here is the one
rule; the transports only apply it:

- the proxy: the environment's `http_proxy`, `https_proxy`, `all_proxy` and
  `no_proxy`, in either case, read per request (`proxy_for`); a proxied
  request checks every address of its target first (`proxy_checked`), since
  the proxy, not us, then connects;
- the trusted CAs: `SSL_CERT_FILE` when set, else `SSL_CERT_DIR`, else
  certifi's bundle (`trust`): what httpx trusts by default, and never the path
  libcurl was built with, which is the wheel builder's, not this system's.
"""

from __future__ import annotations

import os
import ssl
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi

from fetch import outbound


def proxy_for(url: str) -> str | None:
    """The HTTP proxy the environment names for `url` (http_proxy, https_proxy, all_proxy, no_proxy), if any."""
    proxies = urllib.request.getproxies()
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    host = parts.hostname or ""
    # proxy_bypass_environment: the stdlib's no_proxy matching (absent from typeshed's stubs).
    if "no" in proxies and urllib.request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]
        return None
    return proxy


def proxy_checked(url: str) -> str | None:
    """The proxy for `url` (None: connect directly, each address checked as it is connected to).

    Through a proxy every address the target has must pass before the request
    is sent (`outbound.AddressRefused` otherwise). A name only the proxy can
    resolve passes: we cannot see where it leads (`fetch.outbound`).
    """
    proxy = proxy_for(url)
    if proxy is None:
        return None
    parts = urlsplit(url)
    try:
        outbound.check_every_address(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))
    except OSError:
        pass
    return proxy


@dataclass(frozen=True)
class Trust:
    """Where the trusted CA certificates are: one bundle file, or (SSL_CERT_DIR) a hashed directory."""

    cafile: str | None
    capath: str | None = None


def trust(environ: Mapping[str, str] = os.environ) -> Trust:
    """The CAs every transport trusts: SSL_CERT_FILE, else SSL_CERT_DIR, else certifi's bundle."""
    if environ.get("SSL_CERT_FILE"):
        return Trust(environ["SSL_CERT_FILE"])
    if environ.get("SSL_CERT_DIR"):
        return Trust(None, environ["SSL_CERT_DIR"])
    return Trust(certifi.where())


def ssl_context() -> ssl.SSLContext:
    """A TLS client context that verifies against `trust()` (for httpx's connection pools)."""
    trusted = trust()
    return ssl.create_default_context(cafile=trusted.cafile, capath=trusted.capath)
