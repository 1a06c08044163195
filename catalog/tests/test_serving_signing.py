"""Signed page URLs (catalog/serving/signing.py): every branch of minting and checking, pure."""

from __future__ import annotations

import hashlib

import pytest

from catalog.serving.signing import (
    PAGE_PREFIX,
    PSE_PREFIX,
    Refused,
    expiry,
    mac,
    page_message,
    page_path,
    pse_path,
    signable_name,
    verify_page,
    verify_pse,
)

KEY = "k" * 40
OTHER_KEY = "o" * 40
NOW = 1_700_000_000
HOUR = 3600
ETAG = hashlib.sha256(b"page").hexdigest()
NAME = "pages/0f1e2d3c-aaaa-bbbb-cccc-123456789abc/4d2a9c.png"
CHAPTER = "0f1e2d3c-aaaa-bbbb-cccc-123456789abc"

pytestmark = pytest.mark.sqlite_ok


def signed(**overrides):
    args = {"name": NAME, "etag": ETAG, "content_type": "image/png", "user": 7, "now": NOW, "lifetime": HOUR}
    args.update(overrides)
    nginx = args.pop("nginx", False)
    return page_path(KEY, **args, nginx=nginx)


def test_a_page_url_opens_its_page_for_its_user():
    path = signed()
    assert path.startswith(PAGE_PREFIX)
    opened = verify_page(path, KEY, NOW)
    assert (opened.user, opened.etag, opened.name, opened.content_type) == (7, ETAG, NAME, "image/png")


def test_the_expiry_is_at_least_the_lifetime_rounded_up_to_a_quarter_of_it():
    for now in (NOW, NOW + 1, NOW + 899):
        until = expiry(now, HOUR)
        assert until % 900 == 0 and HOUR <= until - now < HOUR + 900


def test_a_url_minted_twice_in_one_window_is_the_same_so_the_browser_cache_holds():
    start = expiry(NOW, HOUR) - HOUR - 900  # the first second of a window
    assert signed(now=start + 1) == signed(now=start + 899)
    assert signed(now=start + 1) != signed(now=start + 901)


def test_an_expired_url_is_refused():
    path = signed()
    until = expiry(NOW, HOUR)
    verify_page(path, KEY, until - 1)
    with pytest.raises(Refused) as refused:
        verify_page(path, KEY, until)
    assert refused.value.status == 403


def test_a_url_signed_with_another_key_is_refused():
    with pytest.raises(Refused) as refused:
        verify_page(signed(), OTHER_KEY, NOW)
    assert refused.value.status == 403


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p.replace(NAME, NAME.replace("4d2a9c", "4d2a9d")),  # another page
        lambda p: p.replace("/7/", "/8/"),  # another user
        lambda p: p.replace(ETAG, "0" * 64),  # another version
        lambda p: p.replace(str(expiry(NOW, HOUR)), str(expiry(NOW, HOUR) + 900)),  # a later expiry
    ],
    ids=["another page", "another user", "another etag", "a later expiry"],
)
def test_a_token_for_one_page_and_user_opens_nothing_else(change):
    path = signed()
    changed = change(path)
    assert changed != path
    with pytest.raises(Refused) as refused:
        verify_page(changed, KEY, NOW)
    assert refused.value.status == 403


def test_a_forged_mac_is_refused_and_the_refusal_does_not_say_why():
    path = signed()
    mac_part = path[len(PAGE_PREFIX) :].split("/", 1)[0]
    forged = path.replace(mac_part, ("A" if mac_part[0] != "A" else "B") + mac_part[1:])
    with pytest.raises(Refused) as forged_refusal:
        verify_page(forged, KEY, NOW)
    with pytest.raises(Refused) as expired_refusal:
        verify_page(path, KEY, NOW + 10 * HOUR)
    assert str(forged_refusal.value) == str(expired_refusal.value) == "Forbidden."
    assert forged_refusal.value.status == expired_refusal.value.status == 403


@pytest.mark.parametrize(
    "path",
    [
        "/signed/pages/",
        "/signed/pages/short/1/7/" + ETAG + "/" + NAME,
        "/signed/pages/" + "A" * 43 + "/soon/7/" + ETAG + "/" + NAME,
        "/signed/pages/" + "A" * 43 + "/1/0/" + ETAG + "/" + NAME,  # user 0
        "/signed/pages/" + "A" * 43 + "/1/7/" + "g" * 64 + "/" + NAME,
        "/signed/pages/" + "A" * 43 + "/1/7/" + ETAG + "/pages/a b.png",
        "/signed/pages/" + "A" * 43 + "/1/7/" + ETAG + "/pages/a\x00.png",
        "/signed/pages/" + "A" * 43 + "/1/7/" + ETAG + "/" + "a" * 400 + ".png",
        "/signed/pse/" + "A" * 43 + "/1/7/" + ETAG + "/" + NAME,
    ],
)
def test_a_malformed_page_url_is_not_found(path):
    with pytest.raises(Refused) as refused:
        verify_page(path, KEY, NOW)
    assert refused.value.status == 404 and str(refused.value) == "Not found."


def test_a_name_that_climbs_out_of_media_root_is_never_signed_and_never_opened():
    for name in ("../etc/passwd.png", "pages/../../x.png", "/etc/x.png", "pages/./x.png", "pages//x.png"):
        assert signed(name=name) is None
    until = expiry(NOW, HOUR)
    for name in ("../etc/passwd.png", "pages/../../x.png", "pages/./x.png", "pages//x.png"):
        # Even under a valid MAC (a leaked key), a dotted or empty segment opens nothing.
        forged = f"{PAGE_PREFIX}{mac(KEY, page_message(until, 7, ETAG, name))}/{until}/7/{ETAG}/{name}"
        with pytest.raises(Refused):
            verify_page(forged, KEY, NOW)


@pytest.mark.parametrize(
    ("name", "content_type", "ok"),
    [
        (NAME, "image/png", True),
        ("pages/c/1.jpg", "image/jpeg", True),
        ("scaled/pages/c/1-page-w720.webp", "image/webp", True),
        ("pages/c/1.png", "image/jpeg", False),  # the extension is not its type
        ("pages/c/1.svg", "image/svg+xml", False),
        ("pages/c/1.PNG", "image/png", False),
        ("pages/c/%2e%2e.png", "image/png", False),
        ("pages/c\\1.png", "image/png", False),
    ],
)
def test_only_plain_names_whose_extension_is_their_type_are_signable(name, content_type, ok):
    assert signable_name(name, content_type) is ok


def test_nothing_is_signed_without_a_user_or_with_an_odd_etag():
    assert signed(user=0) is None and signed(user=-1) is None and signed(user=2**63) is None
    assert signed(etag="") is None and signed(etag=ETAG + "-w720-jpeg") is None


def test_the_url_does_not_carry_the_key():
    for path in (signed(), signed(nginx=True), pse_path(KEY, chapter=CHAPTER, user=7, now=NOW, lifetime=HOUR)):
        assert KEY not in path and KEY[:8] not in path


def test_macs_are_long_enough_not_to_be_guessed():
    assert len(mac(KEY, "m")) == 43  # 256 bits
    assert len(mac(KEY, "m", nginx=True)) == 22  # 128 bits


def test_the_nginx_form_is_nginx_secure_link_md5_over_the_message_and_key():
    import base64

    path = signed(nginx=True)
    until = expiry(NOW, HOUR)
    expected = base64.urlsafe_b64encode(
        hashlib.md5(f"pages/{until}/7/{ETAG}/{NAME} {KEY}".encode()).digest()  # noqa: S324
    ).rstrip(b"=")
    assert path == f"{PAGE_PREFIX}{expected.decode()}/{until}/7/{ETAG}/{NAME}"
    assert verify_page(path, KEY, NOW, nginx=True).name == NAME


def test_one_form_does_not_pass_for_the_other():
    with pytest.raises(Refused):
        verify_page(signed(nginx=True), KEY, NOW)
    with pytest.raises(Refused):
        verify_page(signed(), KEY, NOW, nginx=True)


def test_a_pse_url_opens_any_page_of_its_chapter_for_its_user():
    base = pse_path(KEY, chapter=CHAPTER, user=7, now=NOW, lifetime=HOUR)
    assert base.startswith(PSE_PREFIX) and base.endswith(f"/7/{CHAPTER}/")
    for number in (0, 5, 99_999):
        opened = verify_pse(f"{base}{number}/", KEY, NOW)
        assert (opened.user, opened.chapter, opened.number) == (7, CHAPTER, number)


def test_a_pse_url_does_not_open_another_chapter_or_user_or_after_it_expires():
    base = pse_path(KEY, chapter=CHAPTER, user=7, now=NOW, lifetime=HOUR)
    other = CHAPTER.replace("0f1e", "0f1f")
    for path, now in (
        (base.replace(CHAPTER, other) + "0/", NOW),
        (base.replace("/7/", "/8/") + "0/", NOW),
        (base + "0/", expiry(NOW, HOUR)),
    ):
        with pytest.raises(Refused) as refused:
            verify_pse(path, KEY, now)
        assert refused.value.status == 403


def test_a_page_token_is_no_pse_token():
    """The messages are prefixed by their kind: a page's MAC never passes as a chapter's."""
    page = signed()
    mac_part, rest = page[len(PAGE_PREFIX) :].split("/", 1)
    until = rest.split("/", 1)[0]
    with pytest.raises(Refused):
        verify_pse(f"{PSE_PREFIX}{mac_part}/{until}/7/{CHAPTER}/0/", KEY, NOW)


@pytest.mark.parametrize(
    "tail",
    ["0", "0/1/", "-1/", "1000000/", "x/", "0/?"],
)
def test_a_malformed_pse_url_is_not_found(tail):
    base = pse_path(KEY, chapter=CHAPTER, user=7, now=NOW, lifetime=HOUR)
    with pytest.raises(Refused) as refused:
        verify_pse(base + tail, KEY, NOW)
    assert refused.value.status == 404


def test_a_pse_url_for_no_chapter_id_or_no_user_is_not_minted():
    assert pse_path(KEY, chapter="not-a-uuid", user=7, now=NOW, lifetime=HOUR) is None
    assert pse_path(KEY, chapter=CHAPTER, user=0, now=NOW, lifetime=HOUR) is None
