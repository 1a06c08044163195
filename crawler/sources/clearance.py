"""Getting past a JavaScript challenge once per source, and sending the pass with every plain request after.

A challenged answer (`crawler.sources.challenge`) is handed to the adapter's
`ChallengeHandler`. It asks the store (`crawler.clearance_store`: one row per
source in PostgreSQL, shared by every worker on every host) what to do:

- another worker already passed since this adapter loaded its clearance:
  take that pass and retry (REUSE);
- a pass is in flight elsewhere: wait for it (WAIT), so ten job threads do
  not launch ten passes;
- a pass was tried less than CRAWLER_CHALLENGE_PASS_INTERVAL_SECS ago: the
  source cools down until the next one is allowed (COOL);
- else claim the pass and run it: the worker's Chromium first, then the
  FlareSolverr-compatible solver when one is configured (CLAIM).

What a pass yields (`Clearance`) is the site's cookies and the User-Agent
they are bound to: both go on every page (httpx) and image (libcurl) request
of the source until the cookies expire or the site challenges again. Where
nothing can pass, `ChallengeNotPassed` names the challenge, the URL and what
to configure; it defers the job (the source cools down), never looks like a
parse error or an empty site.

Cookie values are secrets: nothing here logs them or puts them in an error.
"""

from __future__ import annotations

import datetime as dt
import enum
import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from django.utils import timezone

from crawler.errors import ChallengeNotPassed
from crawler.sources.challenge import Challenge

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How often a challenged request is passed and retried before it gives up: once, and once more when the
# first retry used another worker's pass that the site no longer takes.
MAX_PASSES = 2
# How often a worker waiting for another's pass looks at the row again.
WAIT_POLL_SECS = 0.5


# --- what a pass yields ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClearanceCookie:
    name: str
    value: str
    domain: str
    path: str = "/"
    expires: float | None = None  # seconds since the epoch; None: a session cookie

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "domain": self.domain, "path": self.path,
                "expires": self.expires}  # fmt: skip


@dataclass(frozen=True)
class Clearance:
    """The cookies a pass left for the site and the User-Agent they were issued to."""

    cookies: tuple[ClearanceCookie, ...]
    user_agent: str
    via: str  # "browser" or "solver"

    @property
    def expires_at(self) -> dt.datetime | None:
        """When the first cookie with an expiry runs out (None: session cookies only, kept until challenged)."""
        stamps = [c.expires for c in self.cookies if c.expires is not None]
        return dt.datetime.fromtimestamp(min(stamps), dt.UTC) if stamps else None

    def cookie_names(self) -> list[str]:
        return sorted(c.name for c in self.cookies)

    def browser_cookies(self) -> list[dict[str, Any]]:
        """The cookies as Playwright's `add_cookies` takes them (for sources rendered in the browser)."""
        out = []
        for c in self.cookies:
            cookie: dict[str, Any] = {"name": c.name, "value": c.value, "domain": c.domain, "path": c.path}
            if c.expires is not None:
                cookie["expires"] = c.expires
            out.append(cookie)
        return out


def _domain_matches(host: str, domain: str) -> bool:
    domain = domain.lstrip(".").lower()
    return host == domain or host.endswith("." + domain)


def clearance_cookies(
    records: Iterable[Mapping[str, Any]], url: str, *, exclude: Iterable[str] = ()
) -> tuple[ClearanceCookie, ...]:
    """The cookies of `records` that `url`'s host is sent, as a browser or a solver lists them.

    Playwright and FlareSolverr v1/v2 (puppeteer) give `expires` (-1 for a
    session cookie); FlareSolverr v3 (Selenium) gives `expiry` or nothing.
    `exclude` drops cookies that are not the pass's to keep (the operator's
    session cookie, which the session control owns).
    """
    host = (urlsplit(url).hostname or "").lower()
    skip = set(exclude)
    out = []
    for record in records:
        name, value, domain = record.get("name"), record.get("value"), record.get("domain") or host
        if not isinstance(name, str) or not isinstance(value, str) or not name or name in skip:
            continue
        if not isinstance(domain, str) or not _domain_matches(host, domain):
            continue
        stamp = record.get("expires", record.get("expiry"))
        expires = float(stamp) if isinstance(stamp, (int, float)) and stamp > 0 else None
        path = record.get("path") if isinstance(record.get("path"), str) else "/"
        out.append(ClearanceCookie(name, value, domain.lstrip(".").lower(), path or "/", expires))
    return tuple(out)


def clearance_from_json(cookies: Any, user_agent: str, via: str) -> Clearance | None:
    if not isinstance(cookies, list) or not cookies or not user_agent:
        return None
    parsed = tuple(
        ClearanceCookie(c["name"], c["value"], c["domain"], c.get("path") or "/", c.get("expires"))
        for c in cookies
        if isinstance(c, dict) and {"name", "value", "domain"} <= c.keys()
    )
    return Clearance(parsed, user_agent, via) if parsed else None


# --- what to do about a challenge: a pure decision ------------------------------------------------


class Step(enum.Enum):
    REUSE = "reuse"  # a newer pass than the adapter's is stored: retry with it
    WAIT = "wait"  # another worker's pass is in flight: wait for it
    COOL = "cool"  # a pass was tried too recently: the source waits for the next one
    CLAIM = "claim"  # nothing helps but a pass of our own


@dataclass(frozen=True)
class PassRecord:
    """What the store holds about a source's passes, as the decision needs it."""

    generation: int = 0
    clearance_valid: bool = False
    pass_started_at: dt.datetime | None = None
    last_attempt_at: dt.datetime | None = None


def plan_pass(
    record: PassRecord, *, seen_generation: int, now: dt.datetime, interval: dt.timedelta, pass_timeout: dt.timedelta
) -> tuple[Step, dt.datetime | None]:
    """What a challenged adapter that last loaded `seen_generation` does now, and until when (WAIT, COOL).

    A newer stored pass wins over everything (it costs nothing to try); a
    pass in flight is waited for until its timeout, after which it counts as
    dead and may be taken over; the interval spaces attempts, successful or
    not, so a site that challenges every request is not passed in a loop.
    """
    if record.generation > seen_generation and record.clearance_valid:
        return Step.REUSE, None
    if record.pass_started_at is not None and now < record.pass_started_at + pass_timeout:
        return Step.WAIT, record.pass_started_at + pass_timeout
    if record.last_attempt_at is not None and now < record.last_attempt_at + interval:
        return Step.COOL, record.last_attempt_at + interval
    return Step.CLAIM, None


# --- the store and the ways to pass ------------------------------------------------------------------


@dataclass(frozen=True)
class Planned:
    step: Step
    until: dt.datetime | None
    generation: int
    clearance: Clearance | None  # the stored one (REUSE)
    claimed: bool  # CLAIM only: whether this caller now owns the pass


class ClearanceStore(Protocol):
    """Where a source's passes live: the database (`crawler.clearance_store`) or, for a probe, memory."""

    def load(self, source_id: str) -> tuple[Clearance | None, int]:
        """The valid stored clearance (None when absent or expired) and its generation."""

    def plan(self, source_id: str, *, seen_generation: int, owner: str, claim: bool) -> Planned:
        """Decide (`plan_pass`) under the row's lock; with `claim`, a CLAIM marks the pass as this owner's."""

    def store_pass(self, source_id: str, *, owner: str, clearance: Clearance) -> int:
        """Keep a successful pass; returns its generation."""

    def record_failure(self, source_id: str, *, owner: str | None, message: str) -> None:
        """Note why a pass failed (or could not be tried); ends `owner`'s claim."""


class PassFailed(Exception):
    """A way of passing (browser, solver) did not get past the challenge; the message says why."""


class Passer(Protocol):
    name: str  # "browser" or "solver"

    def pass_challenge(self, url: str) -> Clearance:
        """Get past the challenge at `url`; raises PassFailed."""


class MemoryStore:
    """A store that lives as long as one probe of a site not added yet: passes kept, no rate limit shared."""

    def __init__(self) -> None:
        self.clearance: Clearance | None = None
        self.generation = 0
        self.last_failure = ""

    def load(self, source_id: str) -> tuple[Clearance | None, int]:
        return self.clearance, self.generation

    def plan(self, source_id: str, *, seen_generation: int, owner: str, claim: bool) -> Planned:
        if self.generation > seen_generation and self.clearance is not None:
            return Planned(Step.REUSE, None, self.generation, self.clearance, False)
        return Planned(Step.CLAIM, None, self.generation, None, claim)

    def store_pass(self, source_id: str, *, owner: str, clearance: Clearance) -> int:
        self.clearance, self.generation = clearance, self.generation + 1
        return self.generation

    def record_failure(self, source_id: str, *, owner: str | None, message: str) -> None:
        self.last_failure = message


# --- the adapter's side -----------------------------------------------------------------------------


class CookieJar(Protocol):
    def set(self, name: str, value: str, domain: str) -> None: ...


@dataclass(frozen=True)
class PassSettings:
    interval: dt.timedelta  # CRAWLER_CHALLENGE_PASS_INTERVAL_SECS
    wait_secs: float  # CRAWLER_CHALLENGE_WAIT_SECS: one pass's bound
    solver_configured: bool  # CRAWLER_CHALLENGE_SOLVER_URL is set (named in the errors when it is not)

    @property
    def pass_timeout(self) -> dt.timedelta:
        """How long a claimed pass may run before another worker takes it over: both ways, with slack."""
        return dt.timedelta(seconds=2 * self.wait_secs + 30)


class ChallengeHandler:
    """One adapter's view of its source's passes: sends the stored one, and gets a new one when challenged.

    `user_agent` is None until a pass is known; then every request of the
    adapter presents it (the cookies are bound to it).
    """

    def __init__(
        self,
        source_id: str,
        cookies: CookieJar,
        store: ClearanceStore,
        passers: Iterable[Passer],
        settings: PassSettings,
        *,
        cool_down: Callable[[float, str], dt.datetime] | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.source_id = source_id
        self.user_agent: str | None = None
        self.clearance: Clearance | None = None
        self._cookies = cookies
        self._store = store
        self._passers = list(passers)
        self._settings = settings
        self._cool_down = cool_down
        self._cancel = cancel or threading.Event()
        self._owner = f"{uuid.uuid4().hex[:12]}"
        clearance, self._seen = store.load(source_id)
        if clearance is not None:
            self._apply(clearance)

    def on_challenge(self, url: str, challenge: Challenge) -> None:
        """Return once a retry of `url` may get through; raise ChallengeNotPassed when nothing can pass."""
        while True:
            planned = self._store.plan(
                self.source_id, seen_generation=self._seen, owner=self._owner, claim=bool(self._passers)
            )
            if planned.step is Step.REUSE:
                assert planned.clearance is not None
                logger.info("source %s: taking the challenge pass another worker made", self.source_id)
                self._seen = planned.generation
                self._apply(planned.clearance)
                return
            if planned.step is Step.WAIT:
                assert planned.until is not None
                wait = min(WAIT_POLL_SECS, max(0.0, (planned.until - timezone.now()).total_seconds()))
                if self._cancel.wait(wait):
                    raise ChallengeNotPassed(
                        f"source {self.source_id!r}: stopped waiting for the challenge pass in flight for {url}",
                        source_id=self.source_id,
                        until=planned.until,
                    )
                continue
            if planned.step is Step.COOL:
                assert planned.until is not None
                raise self._refusal(
                    url,
                    challenge,
                    f"a pass was tried at {(planned.until - self._settings.interval).isoformat()}; the next is "
                    f"allowed at {planned.until.isoformat()} (CRAWLER_CHALLENGE_PASS_INTERVAL_SECS)",
                    planned.until,
                )
            break
        if not planned.claimed:
            message = self._refusal(url, challenge, self._nothing_to_pass_with(), None)
            self._store.record_failure(self.source_id, owner=None, message=str(message))
            raise message
        self._run_pass(url, challenge, planned.generation)

    def _run_pass(self, url: str, challenge: Challenge, generation: int) -> None:
        reasons = []
        for passer in self._passers:
            try:
                clearance = passer.pass_challenge(url)
            except PassFailed as exc:
                reasons.append(f"the {passer.name} did not get past it: {exc}")
                logger.warning("source %s: the %s did not pass %s at %s: %s",
                               self.source_id, passer.name, challenge.vendor, url, exc)  # fmt: skip
                continue
            except BaseException:
                self._store.record_failure(
                    self.source_id, owner=self._owner, message=f"the {passer.name}'s pass broke off"
                )
                raise
            self._seen = self._store.store_pass(self.source_id, owner=self._owner, clearance=clearance)
            self._apply(clearance)
            expires = clearance.expires_at
            logger.info(
                "source %s: passed %s at %s via the %s; cookies %s until %s",
                self.source_id,
                challenge.describe(),
                url,
                passer.name,
                ", ".join(clearance.cookie_names()),
                expires.isoformat() if expires else "the next challenge",
            )
            return
        if not self._settings.solver_configured:
            reasons.append("CRAWLER_CHALLENGE_SOLVER_URL is not set (a FlareSolverr endpoint would be asked next)")
        until = timezone.now() + self._settings.interval
        error = self._refusal(url, challenge, "; ".join(reasons), until)
        self._store.record_failure(self.source_id, owner=self._owner, message=str(error))
        raise error

    def _nothing_to_pass_with(self) -> str:
        return (
            "no browser runs in this process and CRAWLER_CHALLENGE_SOLVER_URL is not set: let a crawl worker "
            "(which runs Chromium) fetch it, set requires_browser on the source, or point "
            "CRAWLER_CHALLENGE_SOLVER_URL at a FlareSolverr endpoint"
        )

    def _refusal(self, url: str, challenge: Challenge, why: str, until: dt.datetime | None) -> ChallengeNotPassed:
        until = until or timezone.now() + self._settings.interval
        reason = f"{url} answered {challenge.describe()}"
        if self._cool_down is not None:
            secs = max(1.0, (until - timezone.now()).total_seconds())
            until = self._cool_down(secs, f"{reason}, not passed")
        return ChallengeNotPassed(f"source {self.source_id!r}: {reason}; {why}", source_id=self.source_id, until=until)

    def _apply(self, clearance: Clearance) -> None:
        self.clearance = clearance
        self.user_agent = clearance.user_agent
        for cookie in clearance.cookies:
            self._cookies.set(cookie.name, cookie.value, cookie.domain)


class Unpassable:
    """For requests made outside any adapter's handler: a challenge is named, never passed."""

    user_agent: str | None = None
    clearance: Clearance | None = None

    def __init__(self, source_id: str) -> None:
        self.source_id = source_id

    def on_challenge(self, url: str, challenge: Challenge) -> None:
        raise ChallengeNotPassed(
            f"source {self.source_id!r}: {url} answered {challenge.describe()}; nothing here can pass it: "
            "set requires_browser, run a crawl worker with a browser, or set CRAWLER_CHALLENGE_SOLVER_URL",
            source_id=self.source_id,
            until=timezone.now(),
        )


class Challenges(Protocol):
    source_id: str
    user_agent: str | None
    clearance: Clearance | None

    def on_challenge(self, url: str, challenge: Challenge) -> None: ...


def past_challenges(
    url: str, fetch: Callable[[], T], challenge_of: Callable[[T], Challenge | None], challenges: Challenges
) -> T:
    """`fetch()` until its answer is no challenge, passing each challenge in between (MAX_PASSES at most).

    A site that still challenges right after a fresh pass binds its cookie to
    something we cannot carry over (the client's IP, its TLS fingerprint):
    that is said in the error rather than passed again in a loop.
    """
    for attempt in range(MAX_PASSES + 1):
        answer = fetch()
        challenge = challenge_of(answer)
        if challenge is None:
            return answer
        if attempt == MAX_PASSES:
            raise ChallengeNotPassed(
                f"source {challenges.source_id!r}: {url} still answered {challenge.describe()} after "
                f"{MAX_PASSES} passes with the clearance cookie and its User-Agent: the site binds its clearance to "
                "more than those (the client's address or TLS fingerprint); set requires_browser so Chromium "
                "fetches its pages",
                source_id=challenges.source_id,
                until=timezone.now(),
            )
        challenges.on_challenge(url, challenge)
    raise AssertionError("unreachable: the last attempt returns or raises")
