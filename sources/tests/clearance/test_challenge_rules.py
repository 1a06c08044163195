"""The pure rules of JavaScript challenges: what counts as one, when to pass, what a pass keeps, a solver's answer."""

from __future__ import annotations

import datetime as dt

import pytest

from fetch.challenge import detect_challenge
from fetch.tab import chrome_user_agent
from sources.clearance.planning import PassRecord, Step, plan_pass
from sources.clearance.records import PassFailed, clearance_cookies
from sources.clearance.solver import read_answer, solver_request

CF_INTERSTITIAL = (
    "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
    "<script>window._cf_chl_opt={cvId:'3',cZone:'example.com'};</script>"
    "<script src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8f'></script></body></html>"
)
CF_OLD_IUAM = "<html><head><title>Just a moment...</title></head><body><div class='cf-browser-verification'>"
CF_CHL_FORM = "<html><body><form id='challenge-form' class='cf-chl-widget' action='/?__cf_chl_f_tk=x'></form>"
DDOS_GUARD = (
    "<html><head><title>DDoS-Guard</title></head><body><script src='/.well-known/ddos-guard/js-challenge/index.js'>"
)
DDOS_GUARD_CHECK = "<html><body><script src='https://check.ddos-guard.net/check.js'></script></body></html>"
SUCURI = (
    "<html><head><title>You are being redirected...</title></head><script>S='...';sucuri_cloudproxy_js='';</script>"
)
INCAPSULA = "<html><head><META NAME='robots'></head><iframe src='/_Incapsula_Resource?SWUDNSAI=31'></iframe></html>"
CF_BLOCK = "<html><head><title>Attention Required! | Cloudflare</title></head><body>Sorry, you have been blocked"
ORIGIN_403 = "<html><body><h1>Forbidden</h1></body></html>"
ARTICLE = "<html><head><title>How Cloudflare's Just a moment... page works</title></head><body>cf-chl-widget</body>"
CF = {"server": "cloudflare"}

# (status, headers, body) -> the vendor recognised, or None for an ordinary answer.
TRUTH_TABLE = [
    # Cloudflare says so in a header: whatever the status and body.
    (403, {"cf-mitigated": "challenge", **CF}, "", "cloudflare"),
    (503, {"CF-Mitigated": "Challenge"}, ORIGIN_403, "cloudflare"),
    # The interstitial's markup, with or without a server header.
    (403, CF, CF_INTERSTITIAL, "cloudflare"),
    (503, CF, CF_OLD_IUAM, "cloudflare"),
    (403, {}, CF_CHL_FORM, "cloudflare"),
    (429, CF, CF_INTERSTITIAL, "cloudflare"),
    (403, {"server": "ddos-guard"}, DDOS_GUARD, "ddos-guard"),
    (503, {}, DDOS_GUARD_CHECK, "ddos-guard"),
    (403, {}, SUCURI, "sucuri"),
    (403, {}, INCAPSULA, "imperva"),
    # Not challenges: Cloudflare relaying the origin's refusal, its WAF block (no browser passes that), an
    # outage behind Cloudflare, a plain 403, a 404, and a 200 page that talks about challenges.
    (403, CF, ORIGIN_403, None),
    (403, CF, CF_BLOCK, None),
    (503, CF, "<html><body>Service Unavailable</body></html>", None),
    (403, {}, ORIGIN_403, None),
    (404, CF, CF_INTERSTITIAL, None),
    (200, CF, ARTICLE, None),
    (200, CF, CF_INTERSTITIAL, None),
    (401, {"server": "nginx"}, "", None),
]


@pytest.mark.parametrize(("status", "headers", "body", "vendor"), TRUTH_TABLE)
def test_challenge_detection_truth_table(status, headers, body, vendor):
    found = detect_challenge(status, headers, body)
    assert (found.vendor if found else None) == vendor


def test_a_detected_challenge_says_what_gave_it_away():
    assert detect_challenge(403, {"cf-mitigated": "challenge"}).describe() == (
        "a cloudflare JavaScript challenge (cf-mitigated: challenge)"
    )
    assert "'_cf_chl_opt'" in detect_challenge(403, CF, CF_INTERSTITIAL).describe()


NOW = dt.datetime(2026, 12, 7, 5, 0, tzinfo=dt.UTC)
INTERVAL = dt.timedelta(minutes=5)
TIMEOUT = dt.timedelta(seconds=90)


def ago(secs: float) -> dt.datetime:
    return NOW - dt.timedelta(seconds=secs)


# (what the store holds, the generation the adapter last loaded) -> step, until
PLAN_TABLE = [
    # Nothing ever tried: claim.
    (PassRecord(), 0, Step.CLAIM, None),
    # Another worker stored a newer pass that is still valid: take it, whatever else holds.
    (PassRecord(generation=3, clearance_valid=True, last_attempt_at=ago(1)), 2, Step.REUSE, None),
    (PassRecord(generation=3, clearance_valid=True, pass_started_at=ago(1)), 2, Step.REUSE, None),
    # The adapter already has the newest pass, and the site challenged it anyway: not a reuse.
    (PassRecord(generation=3, clearance_valid=True, last_attempt_at=ago(600)), 3, Step.CLAIM, None),
    # A newer pass that expired is no use.
    (PassRecord(generation=3, clearance_valid=False, last_attempt_at=ago(600)), 2, Step.CLAIM, None),
    # A pass in flight: wait for it, until its timeout ...
    (PassRecord(pass_started_at=ago(10), last_attempt_at=ago(10)), 0, Step.WAIT, ago(10) + TIMEOUT),
    # ... after which it is dead and, the interval not over, the source cools.
    (PassRecord(pass_started_at=ago(100), last_attempt_at=ago(100)), 0, Step.COOL, ago(100) + INTERVAL),
    # One pass per interval, failed or not.
    (PassRecord(generation=1, clearance_valid=True, last_attempt_at=ago(60)), 1, Step.COOL, ago(60) + INTERVAL),
    (PassRecord(last_attempt_at=ago(299)), 0, Step.COOL, ago(299) + INTERVAL),
    (PassRecord(last_attempt_at=ago(300)), 0, Step.CLAIM, None),
    (PassRecord(pass_started_at=ago(400), last_attempt_at=ago(400)), 0, Step.CLAIM, None),
]


@pytest.mark.parametrize(("record", "seen", "step", "until"), PLAN_TABLE)
def test_when_to_pass_table(record, seen, step, until):
    assert plan_pass(record, seen_generation=seen, now=NOW, interval=INTERVAL, pass_timeout=TIMEOUT) == (step, until)


def test_a_pass_keeps_the_sites_cookies_with_their_expiry_from_a_browser_or_either_solver_shape():
    records = [
        {"name": "cf_clearance", "value": "v1", "domain": ".example.com", "path": "/", "expires": 1_900_000_000.5},
        {"name": "__cf_bm", "value": "v2", "domain": "example.com", "expires": -1},  # Playwright's session cookie
        {"name": "sel", "value": "v3", "domain": "www.example.com", "expiry": 1_800_000_000},  # Selenium (v3)
        {"name": "other", "value": "x", "domain": "tracker.net", "expires": 1_900_000_000},  # another site's
        {"name": "PHPSESSID", "value": "secret", "domain": "example.com"},  # the operator's session: not ours
        {"name": "", "value": "x", "domain": "example.com"},
        {"name": "broken", "domain": "example.com"},
    ]
    cookies = clearance_cookies(records, "https://www.example.com/manga/", exclude=["PHPSESSID"])
    assert [(c.name, c.domain, c.expires) for c in cookies] == [
        ("cf_clearance", "example.com", 1_900_000_000.5),
        ("__cf_bm", "example.com", None),
        ("sel", "www.example.com", 1_800_000_000.0),
    ]


def test_a_clearance_expires_with_its_first_expiring_cookie_and_session_cookies_never():
    from sources.clearance.records import Clearance, ClearanceCookie

    both = Clearance((ClearanceCookie("a", "1", "x", expires=2000.0), ClearanceCookie("b", "2", "x", expires=1000.0)),
                     "UA", "browser")  # fmt: skip
    assert both.expires_at == dt.datetime.fromtimestamp(1000, dt.UTC)
    assert Clearance((ClearanceCookie("a", "1", "x"),), "UA", "solver").expires_at is None


def test_the_browser_presents_an_ordinary_chrome_user_agent():
    agent = chrome_user_agent("156.0.8078.129")
    assert agent == (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
    )
    assert "Headless" not in agent


# --- FlareSolverr's request.get, as its README documents it (v3) -----------------------------------


def test_the_solver_is_asked_with_request_get_and_max_timeout_in_milliseconds():
    assert solver_request("https://example.com/", 30) == {
        "cmd": "request.get",
        "url": "https://example.com/",
        "maxTimeout": 30000,
    }


V3_ANSWER = {
    "status": "ok",
    "message": "Challenge solved!",
    "solution": {
        "url": "https://example.com/",
        "status": 200,
        "headers": {},
        "response": "<html><body>the site</body></html>",
        "cookies": [
            {
                "name": "cf_clearance",
                "value": "abc",
                "domain": ".example.com",
                "path": "/",
                "expiry": 1_900_000_000,
                "httpOnly": True,
                "secure": True,
                "sameSite": "None",
            }
        ],  # fmt: skip
        "userAgent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0.0.0 Safari/537.36",
    },
    "startTimestamp": 1,
    "endTimestamp": 2,
    "version": "3.3.21",
}


def test_a_solved_answer_gives_the_cookies_the_user_agent_and_the_page():
    answer = read_answer(200, V3_ANSWER)
    assert (answer.status, answer.version, answer.user_agent) == (200, "3.3.21", V3_ANSWER["solution"]["userAgent"])
    assert answer.html.startswith("<html>") and answer.cookies[0]["name"] == "cf_clearance"


@pytest.mark.parametrize(
    ("status_code", "body", "said"),
    [
        (
            500,
            {"status": "error", "message": "Error: Error solving the challenge. Timeout after 30.0 seconds."},
            "Timeout after 30.0 seconds",
        ),  # fmt: skip
        (200, {"status": "ok", "message": ""}, "no solution"),
        (200, {"status": "ok", "solution": {"cookies": [], "userAgent": ""}}, "no userAgent"),
        (200, {"status": "ok", "solution": {"cookies": "x", "userAgent": "UA"}}, "no cookie list"),
        (502, None, "no JSON object"),
    ],
)
def test_a_solver_answer_that_is_no_solution_says_why(status_code, body, said):
    with pytest.raises(PassFailed, match=said):
        read_answer(status_code, body)
