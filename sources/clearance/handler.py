"""Getting past a JavaScript challenge once per source, and sending the pass with every plain request after.

A challenged answer (`fetch.challenge`) is handed to the adapter's
`ChallengeHandler`. It asks the store (`crawler.clearance.rows`: one row per
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
import logging
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from django.utils import timezone

from fetch.challenge import Challenge
from sources.clearance.planning import ClearanceStore, Step
from sources.clearance.records import Clearance, Passer, PassFailed
from sources.errors import ChallengeNotPassed

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How often a challenged request is passed and retried before it gives up: once, and once more when the
# first retry used another worker's pass that the site no longer takes.
MAX_PASSES = 2
# How often a worker waiting for another's pass looks at the row again.
WAIT_POLL_SECS = 0.5


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
