"""The one POST some sites want before they serve any page (FoOlSlide's adult gate: `gate_url`, `gate_body`).

Apart from the adapter because it is a single rule with its own failure:
the POST goes once per adapter, before its first page, and a 4xx or 5xx
answer is a settings mistake naming `gate_url`, not a failed page, since no
page of the site can load until the gate takes it.
"""

from __future__ import annotations

from sources import fields
from sources.config import HtmlSourceConfig
from sources.errors import SourceConfigError
from sources.hosts import HostGuard
from sources.http import SourceHttp
from sources.site_urls import site_url


def pass_gate(
    source_id: str,
    base_url: str,
    config: HtmlSourceConfig,
    values: dict[str, object],
    *,
    guard: HostGuard,
    http: SourceHttp,
) -> None:
    """POST `gate_body` to `gate_url` (templates filled from `values`); SourceConfigError when it is refused."""
    assert config.gate_url is not None
    url = site_url(base_url, fields.fill(config.gate_url, values) or "")
    guard.check(url, what="gate_url request")
    data = {name: fields.fill(v, values) or "" for name, v in config.gate_body}
    answer = http.request_page(url, method="POST", data=data, check=False)
    if answer.status >= 400:
        raise SourceConfigError(f"source {source_id!r}: settings key 'gate_url': POST {url} answered {answer.status}")
