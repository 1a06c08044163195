"""A stand-in for a JavaScript challenge in front of a site, and a stand-in FlareSolverr to pass it.

Neither is Cloudflare nor FlareSolverr: they reproduce the *mechanism* the
crawler must get through, on 127.0.0.1.

`ChallengedMadaraSite` is the Madara fixture site (`theme_sites.madara`)
behind a shield. A request without a valid clearance cookie gets what a
challenging shield serves: 403 with `cf-mitigated: challenge` and
`server: cloudflare`, and an interstitial titled "Just a moment..." whose
inline script does some arithmetic on numbers the server chose (the token),
sets `cf_clearance` and reloads. The cookie is `nonce.answer.signature`; the
server takes it when the answer is right for the nonce and the signature is
the HMAC of the request's own User-Agent and the nonce under the server's
secret: a cookie is worth nothing with another User-Agent, as a real
clearance cookie is. With a valid cookie and the same User-Agent it serves the
Madara site, pages and images alike.

`SolverStandIn` answers FlareSolverr v3's `POST /v1` `request.get` as its
README documents it (see `sources.clearance.solver`), checking the request's
shape: it fetches the challenge, does the page's arithmetic, and answers the
cookie with its own User-Agent, Selenium's cookie shape (`expiry`) included.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from testsupport.theme_sites.madara import MadaraSite
from testsupport.theme_sites.server import Request, Response

COOKIE = "cf_clearance"
COOKIE_MAX_AGE = 3600
# The interstitial as shields print it: the markers the crawler's detector reads are real ones.
_INTERSTITIAL = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta name="robots" content="noindex,nofollow">
<script>window._cf_chl_opt = {{cvId: "3", cType: "managed", cRay: "{nonce}"}};</script>
</head><body><div id="challenge-body-text">Checking if the site connection is secure</div>
<form id="challenge-form" action="/cdn-cgi/challenge-platform/h/g/flow" method="POST"></form>
<script>
(function () {{
  var a = {a}, b = {b}, c = {c};
  var answer = ((a * b) % 9973 + c * 7) % 100003;
  setTimeout(function () {{
    document.cookie = "{cookie}={nonce}." + answer + ".{signature}; path=/; max-age={max_age}";
    location.reload();
  }}, {delay_ms});
}})();
</script></body></html>"""
_NUMBERS = re.compile(r"var a = (\d+), b = (\d+), c = (\d+);")
_NONCE = re.compile(r'cRay: "([0-9a-f]+)"')


def arithmetic(a: int, b: int, c: int) -> int:
    """What the interstitial's script computes (and what a solver computes in its place)."""
    return ((a * b) % 9973 + c * 7) % 100003


class ChallengedMadaraSite(MadaraSite):
    """The Madara fixture site behind the challenge stand-in. `challenges_served` counts interstitials."""

    def __init__(self, *, delay_ms: int = 300, **kwargs: Any) -> None:
        self._secret = secrets.token_bytes(32)
        self._numbers: dict[str, tuple[int, int, int]] = {}
        self._lock = threading.Lock()
        self.delay_ms = delay_ms
        self.challenges_served = 0
        self.shield = True  # False: the site drops its shield (challenges come and go)
        super().__init__(**kwargs)

    def route(self, request: Request) -> Response:
        if not self.shield or self.cleared(request):
            return super().route(request)
        return self._challenge(request)

    def cleared(self, request: Request) -> bool:
        value = _cookies(request.headers.get("cookie", "")).get(COOKIE, "")
        nonce, _, rest = value.partition(".")
        answer, _, signature = rest.partition(".")
        with self._lock:
            numbers = self._numbers.get(nonce)
        if numbers is None or answer != str(arithmetic(*numbers)):
            return False
        return hmac.compare_digest(signature, self._sign(request.headers.get("user-agent", ""), nonce))

    def forget_clearances(self) -> None:
        """Void every cookie handed out so far (a shield rotating its keys): the next request is challenged."""
        with self._lock:
            self._numbers.clear()

    def cleared_agents(self) -> list[str]:
        """The User-Agents of every request that got through the shield."""
        return [r.headers.get("user-agent", "") for r in self.server.requests if self.cleared(r)]

    def _sign(self, user_agent: str, nonce: str) -> str:
        return hmac.new(self._secret, f"{user_agent}|{nonce}".encode(), hashlib.sha256).hexdigest()

    def _challenge(self, request: Request) -> Response:
        nonce = secrets.token_hex(8)
        numbers = (secrets.randbelow(90000) + 1000, secrets.randbelow(90000) + 1000, secrets.randbelow(900) + 100)
        with self._lock:
            self._numbers[nonce] = numbers
            self.challenges_served += 1
        page = _INTERSTITIAL.format(
            nonce=nonce,
            a=numbers[0],
            b=numbers[1],
            c=numbers[2],
            cookie=COOKIE,
            signature=self._sign(request.headers.get("user-agent", ""), nonce),
            max_age=COOKIE_MAX_AGE,
            delay_ms=self.delay_ms,
        )
        headers = {"cf-mitigated": "challenge", "Server": "cloudflare", "Cache-Control": "no-store"}
        return Response(403, page.encode(), headers=headers)


def _cookies(header: str) -> dict[str, str]:
    pairs = (part.strip().partition("=") for part in header.split(";") if "=" in part)
    return {name: value for name, _, value in pairs}


# --- the solver stand-in ------------------------------------------------------------------------------

SOLVER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
)
SOLVER_VERSION = "3.3.21"


class SolverStandIn:
    """A FlareSolverr v3 `/v1` on 127.0.0.1. `requests` holds every command body; `fail` makes it answer an error."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail = False
        self.delay_secs = 0.0  # how long a solve takes (a real one takes seconds)
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's naming
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"null")
                except ValueError:
                    body = None
                status, answer = stand_in.answer(self.path, self.headers.get("Content-Type", ""), body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, name="solver-standin", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def answer(self, path: str, content_type: str, body: Any) -> tuple[int, dict[str, Any]]:
        started = int(time.time() * 1000)
        if isinstance(body, dict):
            self.requests.append(body)
        problem = _request_problem(path, content_type, body)
        if problem:
            return 500, {"status": "error", "message": f"Error: {problem}", "startTimestamp": started,
                         "endTimestamp": started, "version": SOLVER_VERSION}  # fmt: skip
        if self.fail:
            message = f"Error: Error solving the challenge. Timeout after {body['maxTimeout'] / 1000} seconds."
            return 500, {"status": "error", "message": message, "startTimestamp": started,
                         "endTimestamp": int(time.time() * 1000), "version": SOLVER_VERSION}  # fmt: skip
        url = body["url"]
        threading.Event().wait(self.delay_secs)
        html, cookie_value = self._solve(url)
        host = urlsplit(url).hostname or ""
        solution = {
            "url": url,
            "status": 200,  # FlareSolverr v3 always says 200: Selenium does not tell it the status
            "headers": {},
            "response": html,
            "cookies": [
                {
                    "name": COOKIE,
                    "value": cookie_value,
                    "domain": host,
                    "path": "/",
                    "secure": False,
                    "httpOnly": False,
                    "sameSite": "Lax",
                    "expiry": int(time.time()) + COOKIE_MAX_AGE,
                },
            ],  # fmt: skip
            "userAgent": SOLVER_USER_AGENT,
        }
        return 200, {"status": "ok", "message": "Challenge solved!", "solution": solution,
                     "startTimestamp": started, "endTimestamp": int(time.time() * 1000),
                     "version": SOLVER_VERSION}  # fmt: skip

    def _solve(self, url: str) -> tuple[str, str]:
        """Fetch the challenge, do its arithmetic, set the cookie the script would have set, fetch again."""
        challenge = _fetch(url, {"User-Agent": SOLVER_USER_AGENT})
        numbers, nonce = _NUMBERS.search(challenge), _NONCE.search(challenge)
        if numbers is None or nonce is None:
            return challenge, ""
        signature = re.search(rf'{nonce.group(1)}\." \+ answer \+ "\.([0-9a-f]+);', challenge)
        assert signature is not None, "the interstitial carries its signature"
        value = f"{nonce.group(1)}.{arithmetic(*map(int, numbers.groups()))}.{signature.group(1)}"
        page = _fetch(url, {"User-Agent": SOLVER_USER_AGENT, "Cookie": f"{COOKIE}={value}"})
        return page, value


def _request_problem(path: str, content_type: str, body: Any) -> str:
    """What is wrong with a command, as FlareSolverr would refuse it ('' when it is a good request.get)."""
    if path != "/v1":
        return f"unknown path {path}"
    if not content_type.startswith("application/json"):
        return "the request must be JSON"
    if not isinstance(body, dict):
        return "Request parameter 'cmd' is mandatory."
    if body.get("cmd") != "request.get":
        return f"Request parameter 'cmd' = '{body.get('cmd')}' is invalid."
    if not isinstance(body.get("url"), str) or not body["url"].startswith(("http://", "https://")):
        return "Request parameter 'url' is mandatory in 'request.get' command."
    if not isinstance(body.get("maxTimeout"), int) or body["maxTimeout"] <= 0:
        return "maxTimeout must be a positive number of milliseconds"
    extra = set(body) - {"cmd", "url", "maxTimeout", "session", "cookies", "returnOnlyCookies", "proxy"}
    if extra:
        return f"unknown parameters {sorted(extra)}"
    return ""


def _fetch(url: str, headers: dict[str, str]) -> str:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - a test's own 127.0.0.1 site
            return answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.read().decode()
