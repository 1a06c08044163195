"""Fault switches of the demo site: every failure the crawler must survive, off by default."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class DemoFaults:
    # Each time list page 1 is served, a new manga is prepended right after the
    # page is rendered: it lands on a page the walker has already read, and every
    # other ref slides one slot later: the list drift a busy real site shows mid-walk.
    list_drift: bool = False
    detail_404: set[str] = field(default_factory=set)  # manga keys whose detail page answers 404
    slow_secs: float = 0.0  # delay before every response
    broken_image: bool = False  # right magic bytes, garbage after them
    html_as_image: bool = False  # image URLs answer 200 with an HTML error page
    cut_image_mid_body: bool = False  # full Content-Length announced, connection closed halfway
    login_wall: bool = False  # every page answers the login form (an expired session)
    markup_drift: bool = False  # some list anchors lose their href or title
    outage: bool = False  # every request answers 503
    # When set, pages demand the cookie PHPSESSID=<value> (else the login wall)
    # and images answer 403 without it.
    require_session: str | None = None
    offsite_images: str | None = None  # chapter pages point their <img> at this other origin
    redirect_images_to: str | None = None  # image URLs answer 302 to this other origin

    def update(self, values: dict[str, Any]) -> None:
        """Apply a partial update (the control endpoint's JSON); a bad key or type changes nothing."""
        known = {f.name: f for f in fields(self)}
        parsed: dict[str, Any] = {}
        for name, value in values.items():
            if name not in known:
                raise ValueError(f"unknown demo fault {name!r}; known: {sorted(known)}")
            parsed[name] = _coerce(name, value)
        for name, value in parsed.items():
            setattr(self, name, value)

    def as_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["detail_404"] = sorted(self.detail_404)
        return data


def _coerce(name: str, value: Any) -> Any:
    if name == "detail_404":
        if not isinstance(value, list | set | tuple) or not all(isinstance(k, str) for k in value):
            raise ValueError("demo fault 'detail_404' must be a list of manga keys")
        return set(value)
    if name == "slow_secs":
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError("demo fault 'slow_secs' must be a non-negative number")
        return float(value)
    if name in ("require_session", "offsite_images", "redirect_images_to"):
        if value is not None and (not isinstance(value, str) or not value):
            raise ValueError(f"demo fault {name!r} must be a non-empty string or null")
        return value
    if not isinstance(value, bool):
        raise ValueError(f"demo fault {name!r} must be true or false")
    return value
