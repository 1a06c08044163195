"""A FlareSolverr-compatible challenge solver, asked where no browser of ours can pass (CRAWLER_CHALLENGE_SOLVER_URL).

The API is FlareSolverr's `POST /v1` with the `request.get` command, as its
README documents it (shapes taken from FlareSolverr 3.3.21: its README's
"request.get" section and `src/dtos.py`; v1/v2 answer the same outer shape):

    request:  {"cmd": "request.get", "url": "...", "maxTimeout": 60000}
    answer:   {"status": "ok", "message": "Challenge solved!", "version": "3.3.21",
               "startTimestamp": ..., "endTimestamp": ...,
               "solution": {"url": "...", "status": 200, "headers": {...}, "response": "<html>...",
                            "cookies": [{"name", "value", "domain", "path", "expiry"?, "httpOnly",
                                         "secure", "sameSite"}, ...],
                            "userAgent": "Mozilla/5.0 ..."}}
    failure:  {"status": "error", "message": "Error: Error solving the challenge. Timeout after ..."}
              (HTTP 500)

v3 takes its cookies from Selenium (`expiry`, absent for session cookies);
v1/v2 from puppeteer (`expires`, -1 for session cookies): both are read.
FlareSolverr warns that its clearance cookie only works with its own
User-Agent: the pass keeps both.

The endpoint is the operator's own service, configured like the database,
so it is not put through the source's host guard; the URL it is asked to
open is (the caller checks it first).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx

from fetch.challenge import detect_challenge
from sources.clearance.records import Clearance, PassFailed, clearance_cookies

# The solver gets the challenge's own bound plus this much for its browser to start and answer.
SLACK_SECS = 15.0


@dataclass(frozen=True)
class SolverAnswer:
    url: str
    status: int
    html: str
    cookies: list[dict[str, Any]]
    user_agent: str
    version: str


def solver_request(url: str, max_timeout_secs: float) -> dict[str, Any]:
    """The `request.get` command FlareSolverr's README documents."""
    return {"cmd": "request.get", "url": url, "maxTimeout": int(max_timeout_secs * 1000)}


def read_answer(status_code: int, body: Any) -> SolverAnswer:
    """The solution of a FlareSolverr answer; PassFailed naming what was wrong with it."""
    if not isinstance(body, dict):
        raise PassFailed(f"the solver answered {status_code} with no JSON object")
    if body.get("status") != "ok":
        message = body.get("message") or "no message"
        raise PassFailed(f"the solver answered {status_code} {body.get('status')!r}: {message}")
    solution = body.get("solution")
    if not isinstance(solution, dict):
        raise PassFailed("the solver said ok but sent no solution")
    cookies, user_agent = solution.get("cookies"), solution.get("userAgent")
    if not isinstance(cookies, list) or not all(isinstance(c, dict) for c in cookies):
        raise PassFailed("the solver's solution has no cookie list")
    if not isinstance(user_agent, str) or not user_agent:
        raise PassFailed("the solver's solution has no userAgent (its cookies are bound to it)")
    status, html = solution.get("status"), solution.get("response")
    return SolverAnswer(
        url=str(solution.get("url") or ""),
        status=status if isinstance(status, int) else 200,
        html=html if isinstance(html, str) else "",
        cookies=cookies,
        user_agent=user_agent,
        version=str(body.get("version") or ""),
    )


class SolverPasser:
    """`sources.clearance.records.Passer` through a FlareSolverr endpoint."""

    name = "solver"

    def __init__(self, endpoint: str, *, wait_secs: float, exclude_cookies: Iterable[str] = ()) -> None:
        self.endpoint = endpoint
        self.wait_secs = wait_secs
        self.exclude = tuple(exclude_cookies)

    def pass_challenge(self, url: str) -> Clearance:
        try:
            response = httpx.post(
                self.endpoint, json=solver_request(url, self.wait_secs), timeout=self.wait_secs + SLACK_SECS
            )
        except httpx.HTTPError as exc:
            raise PassFailed(
                f"the solver at {self.endpoint} could not be asked (CRAWLER_CHALLENGE_SOLVER_URL): {exc}"
            ) from exc
        try:
            body = response.json()
        except ValueError:
            body = None
        answer = read_answer(response.status_code, body)
        challenge = detect_challenge(answer.status, {}, answer.html)
        if answer.status >= 400 or challenge is not None:
            what = challenge.describe() if challenge else f"an error page ({answer.status})"
            raise PassFailed(f"the solver's browser still saw {what}")
        cookies = clearance_cookies(answer.cookies, url, exclude=self.exclude)
        if not cookies:
            raise PassFailed("the solver's solution holds no cookie for the site")
        return Clearance(cookies, answer.user_agent, "solver")
