"""The settings contract's secrets: masked on the way out, kept when sent back masked, replaced by a new value.

Pure functions over the keys the crawler registers (`crawler.apps`): the
Suwayomi password and the credential headers of an HTML source's `headers`.
"""

from __future__ import annotations

from catalog.source_settings import MASK, masked, secret_keys, with_stored_secrets

STORED = {
    "suwayomi_source": "2499283573021220255",
    "suwayomi_username": "reader",
    "suwayomi_password": "pa55-Wh1sper",
    "rate_limit": 1,
}


def test_the_suwayomi_password_is_a_secret_key_registered_beside_its_kinds_keys():
    assert "suwayomi_password" in secret_keys()
    assert "suwayomi_username" not in secret_keys()


def test_masked_replaces_only_the_secrets():
    assert masked(STORED) == {**STORED, "suwayomi_password": MASK}
    assert STORED["suwayomi_password"] == "pa55-Wh1sper"  # the row's own dict is left alone
    assert masked("not an object") == "not an object"


def test_credential_headers_are_masked_by_name_whatever_their_case_and_other_headers_are_not():
    settings = {"headers": {"Authorization": "Bearer t0ken", "X-API-Key": "k3y", "Accept-Language": "en"}}
    assert masked(settings) == {"headers": {"Authorization": MASK, "X-API-Key": MASK, "Accept-Language": "en"}}


def test_a_masked_secret_sent_back_keeps_the_stored_one():
    edited = {**masked(STORED), "rate_limit": 2}
    assert with_stored_secrets(edited, STORED) == {**STORED, "rate_limit": 2}


def test_a_new_secret_replaces_the_stored_one_and_a_left_out_secret_is_removed():
    assert with_stored_secrets({**STORED, "suwayomi_password": "n3w"}, STORED)["suwayomi_password"] == "n3w"
    without = {k: v for k, v in STORED.items() if k != "suwayomi_password"}
    assert "suwayomi_password" not in with_stored_secrets(without, STORED)


def test_a_mask_with_nothing_stored_behind_it_is_never_stored_as_the_secret():
    assert with_stored_secrets({"suwayomi_password": MASK}, {}) == {}
    assert with_stored_secrets({"headers": {"Authorization": MASK, "Accept": "*/*"}}, {}) == {
        "headers": {"Accept": "*/*"}
    }


def test_masked_headers_sent_back_keep_their_stored_values():
    stored = {"headers": {"Authorization": "Bearer t0ken", "Accept": "*/*"}}
    back = {"headers": {"Authorization": MASK, "Accept": "image/*"}}
    assert with_stored_secrets(back, stored) == {"headers": {"Authorization": "Bearer t0ken", "Accept": "image/*"}}


def test_a_sources_config_in_a_log_line_carries_neither_a_password_nor_a_credential_header():
    from sources.config import HtmlSourceConfig
    from sources.suwayomi.config import SuwayomiConfig

    suwayomi = SuwayomiConfig.from_settings(
        {"suwayomi_source": "1", "suwayomi_username": "reader", "suwayomi_password": "pa55-Wh1sper"}, source_id="harbor"
    )
    html = HtmlSourceConfig("/list/{page}", "a", "h1", "li", headers=(("Authorization", "Bearer t0ken"),))
    assert "pa55-Wh1sper" not in repr(suwayomi) and "t0ken" not in repr(html)
