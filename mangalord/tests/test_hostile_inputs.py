"""The hostile input table: every case answers a 4xx, never a 5xx, and leaves the database as it was.

Each row is one request a hostile client sent in the second round of outside
attacks, or the general form of one: NUL and over-long user names
on every way in, deeply nested and oversized JSON on every endpoint that reads
a body, and for each integer a list or path reads, its unicode-digit, huge and
negative forms. Production-like settings: DEBUG off, reads need an account,
the client keeps the server's 500 as an answer instead of raising it.

"Nothing changed" compares every table's rows before and after, except the
lockout's own bookkeeping (django-axes' attempt rows): a bad credential is
meant to count against the address that sent it.

Runs on PostgreSQL in the main run, where NULs and over-long values are
refused by the database rather than stored, and on SQLite (`sqlite_ok`).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote_from_bytes

import pytest
from django.apps import apps
from django.test import Client

from accounts import api_keys
from catalog.models import Bookmark, Tag
from reader.kosync import documents
from reader.models import DocumentDigest
from reader.tests import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_ok]

PASSWORD = "alice-password"
DEEP = 100_000  # far past Python's recursion limit: json.loads raised RecursionError
HUGE = "9" * 5000  # past int()'s 4,300-digit limit too
INTEGER_FORMS = {
    "superscript": "\u00b2",  # "²".isdigit() is True, int("²") raises
    "circled": "\u2460",  # "①", the same
    "arabic-indic": "\u0663",  # int("٣") == 3: not an ASCII digit, refused as well
    "huge": HUGE,
    "20-digits": "9" * 20,
    "negative": "-3",
}
NO_DOUBLE = "1e999999"
# Tables whose rows a refused request may write: the lockout counts bad credentials per address.
BOOKKEEPING = {"axes_accessattempt", "axes_accessfailurelog", "axes_accesslog", "django_session"}


def basic(username: str, password: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


def deep_json(depth: int = DEEP) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def nested_list(depth: int = DEEP) -> bytes:
    return b"[" * depth + b"]" * depth


def oversized_json() -> bytes:
    return json.dumps({"pad": "x" * (3 * 1024 * 1024)}).encode()


@dataclass
class World:
    alice: Any
    staff: Any
    source: Any
    manga: Any
    chapter: Any
    page: Any
    tag: Any
    document: str
    kosync: dict[str, str]
    raw_key: str


@dataclass(frozen=True)
class Case:
    id: str
    persona: str  # anon | reader (session) | staff (session) | kosync (KOReader's headers)
    method: str
    path: str | Callable[[World], str]
    body: bytes | Callable[[World], bytes] | None = None
    content_type: str = "application/json"
    headers: dict[str, str] | Callable[[World], dict[str, str]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    # A 4xx, unless the door's own answer to bad input is another (a login form re-rendered with its error).
    allowed: tuple[int, ...] = ()


def _at(template: str) -> Callable[[World], str]:
    return lambda w: template.format(w=w)


CASES: list[Case] = []

# --- User names on every way in (Basic, KOReader's x-auth-user, the login forms, kosync registration) ---------
BAD_NAMES = {"nul": "a\x00b", "256-chars": "x" * 256, "5000-chars": "y" * 5000, "bidi": "ad\u202emin", "ctrl": "a\x1bb"}
for door in ("/opds/", "/api/v1/mangas/", "/api/v1/series", "/opds/all/", "/api/v1/progress/"):
    for name, bad in BAD_NAMES.items():
        CASES.append(Case(f"basic-{name}-{door}", "anon", "GET", door, headers=basic(bad, "whatever")))
        CASES.append(Case(f"basic-key-{name}-{door}", "anon", "GET", door, headers=basic(bad, "mlk_" + "k" * 43)))
for name, bad in BAD_NAMES.items():
    CASES.append(
        Case(
            f"kosync-auth-{name}",
            "anon",
            "GET",
            "/kosync/users/auth",
            headers={"HTTP_X_AUTH_USER": bad, "HTTP_X_AUTH_KEY": "0" * 32},
        )
    )
    for form in ("/login/", "/admin/login/"):
        CASES.append(
            Case(
                f"form-{name}-{form}",
                "anon",
                "POST",
                form,
                body=f"username={bad.replace(chr(0), '%00')}&password=x".encode(),
                content_type="application/x-www-form-urlencoded",
                allowed=(200,),
            )
        )
    CASES.append(
        Case(
            f"token-{name}",
            "anon",
            "POST",
            "/api/v1/auth/token/",
            body=json.dumps({"username": bad, "password": "x"}).encode(),
        )
    )
    CASES.append(
        Case(
            f"kosync-register-{name}",
            "anon",
            "POST",
            "/kosync/users/create",
            body=json.dumps({"username": bad, "password": hashlib.md5(b"p").hexdigest()}).encode(),
            settings={"KOSYNC_ALLOW_REGISTRATION": True},
        )
    )
for name, bad in {"nul": "a\x00" * 16, "long": "f" * 5000, "not-hex": "z" * 32}.items():
    CASES.append(
        Case(
            f"kosync-register-key-{name}",
            "anon",
            "POST",
            "/kosync/users/create",
            body=json.dumps({"username": "newcomer", "password": bad}).encode(),
            settings={"KOSYNC_ALLOW_REGISTRATION": True},
        )
    )

# The lockout stores the user agent of a failure beside the name: a NUL there is PostgreSQL's to refuse too.
CASES.append(
    Case(
        "basic-user-agent-nul", "anon", "GET", "/opds/", headers={**basic("alice", "wrong"), "HTTP_USER_AGENT": "K\x00"}
    )
)
CASES.append(
    Case(
        "kosync-key-nul",
        "anon",
        "GET",
        "/kosync/users/auth",
        headers={"HTTP_X_AUTH_USER": "alice", "HTTP_X_AUTH_KEY": "\x00" * 32},
    )
)

# --- Deeply nested and oversized JSON on every endpoint that reads a body -------------------------------------
BODY_DOORS = [
    ("token", "anon", "POST", "/api/v1/auth/token/"),
    ("bookmark", "reader", "POST", "/api/v1/bookmarks/"),
    ("progress", "reader", "PUT", _at("/api/v1/progress/{w.chapter.id}/")),
    ("komga-progress", "reader", "PATCH", _at("/api/v1/books/{w.chapter.id}/read-progress")),
    ("komga-tracker", "reader", "PUT", _at("/api/v2/series/{w.manga.id}/read-progress/tachiyomi")),
    ("kosync-register", "anon", "POST", "/kosync/users/create"),
    ("kosync-progress", "kosync", "PUT", "/kosync/syncs/progress"),
    ("run", "staff", "POST", "/api/v1/admin/crawler/run/"),
    ("requeue", "staff", "POST", "/api/v1/admin/crawler/requeue/"),
    ("session", "staff", "POST", "/api/v1/admin/crawler/session/"),
    ("force-analyze", "staff", "POST", "/api/v1/admin/crawler/force-analyze/"),
    ("disk-floor", "staff", "POST", "/api/v1/admin/crawler/disk-floor/"),
]
for name, persona, method, path in BODY_DOORS:
    on = {"KOSYNC_ALLOW_REGISTRATION": True}
    CASES.append(Case(f"deep-object-{name}", persona, method, path, body=deep_json(), settings=on))
    CASES.append(Case(f"deep-list-{name}", persona, method, path, body=nested_list(), settings=on))
    CASES.append(Case(f"oversized-{name}", persona, method, path, body=oversized_json(), settings=on))
    CASES.append(Case(f"not-utf8-{name}", persona, method, path, body=b'{"a": "\xff\xfe"}', settings=on))


def _deep_cursor(_: World) -> str:
    return base64.urlsafe_b64encode(nested_list(5000)).decode().rstrip("=")


for name, text in {"deep": nested_list(), "oversized": oversized_json()}.items():
    CASES.append(
        Case(
            f"{name}-source-settings-form",
            "staff",
            "POST",
            _at("/admin/crawler/sources/{w.source.id}/settings/"),
            body=b"settings=" + quote_from_bytes(text).encode(),
            content_type="application/x-www-form-urlencoded",
            allowed=(200,),  # the Sources page shows its form again, saying what is wrong
        )
    )
CASES.append(
    Case("deep-cursor-dead-jobs", "staff", "GET", lambda w: f"/api/v1/admin/crawler/dead-jobs/?after={_deep_cursor(w)}")
)
CASES.append(Case("deep-cursor-opds-all", "reader", "GET", lambda w: f"/opds/all/?after={_deep_cursor(w)}"))

# --- Integers in query strings of every list, and in paths -----------------------------------------------------
INTEGER_PARAMS = [
    ("reader", "/api/v1/mangas/", "page"),
    ("reader", "/api/v1/mangas/", "page_size"),
    ("reader", "/api/v1/mangas/?q=berserk", "page"),
    ("reader", "/api/v1/bookmarks/", "page"),
    ("reader", "/api/v1/bookmarks/", "page_size"),
    ("reader", "/api/v1/progress/", "page"),
    ("reader", "/api/v1/progress/", "page_size"),
    ("staff", "/api/v1/admin/crawler/dead-jobs/", "page"),
    ("staff", "/api/v1/admin/crawler/dead-jobs/", "page_size"),
    ("staff", "/api/v1/admin/crawler/history/", "page"),
    ("staff", "/api/v1/admin/crawler/history/", "page_size"),
    ("staff", "/api/v1/admin/crawler/backlog/", "page"),
    ("staff", "/api/v1/admin/crawler/backlog/", "page_size"),
    ("reader", "/api/v1/series", "page"),
    ("reader", "/api/v1/series", "size"),
    ("reader", "/api/v1/series/{w.manga.id}/books", "page"),
    ("reader", "/api/v1/series/{w.manga.id}/books", "size"),
    ("reader", "/api/v2/authors", "page"),
    ("reader", "/api/v2/authors", "size"),
    ("reader", "/api/v1/collections", "page"),
    ("reader", "/api/v1/readlists", "size"),
    ("reader", "/", "page"),
    ("reader", "/mangas/{w.manga.id}/", "page"),
    ("reader", "/opds/all/", "page"),
    ("reader", "/opds/latest/", "page"),
    ("reader", "/opds/search/?q=berserk", "page"),
    ("reader", "/opds/tags/", "page"),
    ("reader", "/opds/tags/{w.tag.id}/", "page"),
    ("reader", "/opds/bookmarks/", "page"),
    ("reader", "/opds/mangas/{w.manga.id}/", "page"),
    ("reader", "/opds/chapters/{w.chapter.id}/pages/0/", "maxWidth"),
    ("reader", "/read/pages/{w.page.id}/image/", "w"),
]
for persona, path, param in INTEGER_PARAMS:
    for form, value in INTEGER_FORMS.items():
        joiner = "&" if "?" in path else "?"
        CASES.append(Case(f"int-{form}-{param}-{path}", persona, "GET", _at(f"{path}{joiner}{param}={value}")))
# The admin's own lists are Django's: a page number it cannot read shows the first (or last) page.
for path in ("/admin/catalog/manga/", "/admin/jobs/job/", "/admin/crawler/auditevent/", "/admin/accounts/apikey/"):
    for form, value in INTEGER_FORMS.items():
        CASES.append(Case(f"int-{form}-p-{path}", "staff", "GET", f"{path}?p={value}", allowed=(200,)))

PATH_INTEGERS = [
    ("reader", "GET", "/opds/tags/{n}/"),
    ("reader", "GET", "/opds/chapters/{w.chapter.id}/pages/{n}/"),
    ("reader", "GET", "/api/v1/books/{w.chapter.id}/pages/{n}"),
    ("reader", "POST", "/account/keys/{n}/revoke/"),
]
for persona, method, path in PATH_INTEGERS:
    for form, value in {"20-digits": "9" * 20, "huge": HUGE}.items():
        # Revoking a key that is not one's own goes back to the account page, saying so.
        allowed = (302,) if "revoke" in path else ()
        CASES.append(Case(f"path-{form}-{path}", persona, method, _at(path.replace("{n}", value)), allowed=allowed))

# Integers inside JSON bodies.
for form, value in {"huge": int("9" * 40), "negative": -1, "arabic-indic-text": "\u0663", "huge-text": HUGE}.items():
    CASES.append(
        Case(
            f"json-int-{form}-requeue",
            "staff",
            "POST",
            "/api/v1/admin/crawler/requeue/",
            body=json.dumps({"scope": "chapter", "target": value}).encode(),
        )
    )
    CASES.append(
        Case(
            f"json-int-{form}-force-analyze",
            "staff",
            "POST",
            "/api/v1/admin/crawler/force-analyze/",
            body=json.dumps({"page": value}).encode(),
        )
    )
    CASES.append(
        Case(
            f"json-int-{form}-progress",
            "reader",
            "PUT",
            _at("/api/v1/progress/{w.chapter.id}/"),
            body=json.dumps({"last_page": value}).encode(),
        )
    )
    CASES.append(
        Case(
            f"json-int-{form}-komga-progress",
            "reader",
            "PATCH",
            _at("/api/v1/books/{w.chapter.id}/read-progress"),
            body=json.dumps({"page": value}).encode(),
        )
    )

# --- Values PostgreSQL refuses: NULs, numbers past a column ---------------------------------------------------
for form, raw in {
    "number": NO_DOUBLE.encode(),
    "string": json.dumps(NO_DOUBLE).encode(),
    "negative": b"-1e999999",
    "past-the-column": b"1e12",
    "nan-string": b'"NaN"',
}.items():
    CASES.append(
        Case(
            f"komga-tracker-{form}",
            "reader",
            "PUT",
            _at("/api/v2/series/{w.manga.id}/read-progress/tachiyomi"),
            body=b'{"lastBookNumberSortRead": ' + raw + b"}",
        )
    )
for name, body in {
    "document-nul": lambda w: json.dumps({"document": "ab\x00cd", "progress": "1", "percentage": 0.5}).encode(),
    "document-long": lambda w: json.dumps({"document": "d" * 5000, "progress": "1", "percentage": 0.5}).encode(),
    "progress-nul": lambda w: json.dumps({"document": w.document, "progress": "1\x00", "percentage": 0.5}).encode(),
    "progress-superscript": lambda w: json.dumps(
        {"document": w.document, "progress": "\u00b2", "percentage": 1}
    ).encode(),
    "progress-huge": lambda w: json.dumps({"document": w.document, "progress": HUGE, "percentage": 1}).encode(),
    "percentage-huge": lambda w: (
        b'{"document": "' + w.document.encode() + b'", "progress": "1", "percentage": 1e999999}'
    ),
    "device-nul": lambda w: json.dumps(
        {"document": "nothing-here", "progress": "1", "percentage": 0.5, "device": "K\x00"}
    ).encode(),
}.items():
    CASES.append(Case(f"kosync-{name}", "kosync", "PUT", "/kosync/syncs/progress", body=body))
CASES.append(Case("kosync-get-long-document", "kosync", "GET", "/kosync/syncs/progress/" + "d" * 5000))

# --- API-key names (the account page) and the site URL an operator types (the Sources page) -------------------
for name, bad in {**BAD_NAMES, "empty": "   "}.items():
    CASES.append(
        Case(
            f"api-key-name-{name}",
            "reader",
            "POST",
            "/account/",
            body=f"name={quote_from_bytes(bad.encode())}&scope=read".encode(),
            content_type="application/x-www-form-urlencoded",
        )
    )
for name, url in {
    "unclosed-ipv6": "http://[::1",
    "bad-ipv6": "https://[zz]/",
    "octal-loopback": "http://0177.0.0.1/",
    "decimal-loopback": "http://2130706433/",
    "mapped-loopback": "http://[::ffff:127.0.0.1]/",
    "metadata-address": "http://169.254.169.254/latest/meta-data/",
    "bad-port": "http://example.com:99999/",
    "nul": "http://exa\x00mple.com/",
}.items():
    CASES.append(
        Case(
            f"sources-page-url-{name}",
            "staff",
            "POST",
            "/admin/crawler/sources/add/",
            body=f"step=detect&url={quote_from_bytes(url.encode())}".encode(),
            content_type="application/x-www-form-urlencoded",
            settings={"OUTBOUND_ALLOWED_NETWORKS": ()},
        )
    )


# --- The fixture world, the snapshot and the test -------------------------------------------------------------
@pytest.fixture
def world(db, django_user_model, settings) -> World:
    settings.DEBUG = False
    settings.LIBRARY_PUBLIC_READ = False
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    alice = django_user_model.objects.create_user("alice", "alice@example.com", PASSWORD)
    staff = django_user_model.objects.create_user(
        "sam", "sam@example.com", "sam-password", is_staff=True, is_superuser=True
    )
    source = f.source("demo")
    manga = f.manga("Berserk", src=source, tags=("Seinen",))
    chapter = f.chapter(manga, 1, src=source, pages=2, width=600, height=900)
    Bookmark.objects.create(user=alice, manga=manga)
    document = hashlib.md5(b"a served cbz").hexdigest()
    documents.remember(document, chapter, DocumentDigest.Method.BINARY)
    _, raw = api_keys.mint(alice, "KOReader")
    kosync = {"HTTP_X_AUTH_USER": "alice", "HTTP_X_AUTH_KEY": api_keys.kosync_key(raw)}
    # One good sign-in first: it notes the key's last use, which a refused request must not be blamed for.
    assert Client().get("/kosync/users/auth", **kosync).status_code == 200
    return World(
        alice=alice,
        staff=staff,
        source=source,
        manga=manga,
        chapter=chapter,
        page=chapter.pages.order_by("index").first(),
        tag=Tag.objects.get(name="Seinen"),
        document=document,
        kosync=kosync,
        raw_key=raw,
    )


def snapshot() -> dict[str, list[tuple]]:
    """Every row of every table we and our libraries own (bookkeeping aside), in key order."""
    rows = {}
    for model in apps.get_models():
        table = model._meta.db_table
        if model._meta.managed and not model._meta.proxy and table not in BOOKKEEPING:
            rows[table] = sorted(
                (tuple(map(repr, row)) for row in model._default_manager.order_by().values_list()), key=str
            )
    return rows


def client_for(case: Case, w: World) -> tuple[Client, dict[str, str]]:
    client = Client(raise_request_exception=False)
    headers: dict[str, str] = {}
    if case.persona == "reader":
        client.force_login(w.alice)
    elif case.persona == "staff":
        client.force_login(w.staff)
        headers["HTTP_ORIGIN"] = "http://testserver"  # the admin API's origin check passes: the input is what is tested
    elif case.persona == "kosync":
        headers.update(w.kosync)
    return client, headers


def send(case: Case, w: World, client: Client, headers: dict[str, str]):
    extra = case.headers(w) if callable(case.headers) else case.headers
    headers.update(extra)
    path = case.path(w) if callable(case.path) else case.path
    body = case.body(w) if callable(case.body) else case.body
    method = getattr(client, case.method.lower())
    if body is None:
        return method(path, **headers)
    return method(path, data=body, content_type=case.content_type, **headers)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_a_4xx_and_changes_nothing(case, world, settings):
    for name, value in case.settings.items():
        setattr(settings, name, value)
    client, headers = client_for(case, world)  # a session sign-in writes its row and last_login: before the snapshot
    before = snapshot()
    response = send(case, world, client, headers)
    assert 400 <= response.status_code < 500 or response.status_code in case.allowed, (
        case.id,
        response.status_code,
        response.content[:300],
    )
    assert snapshot() == before, case.id
