"""Forms of the Sources page: a site's URL, then its name, id, preset and extra settings keys."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from catalog import inputs
from sources.presets import PRESETS

NO_PRESET = ""


def parse_settings(text: str) -> dict[str, Any]:
    """A settings JSON object typed by the operator; ValidationError naming the problem otherwise."""
    if not text.strip():
        return {}
    try:
        inputs.check_json_size(text.encode("utf-8", "surrogatepass"))
    except inputs.BadJson as exc:  # checked before parsing: json.loads recurses once per level
        raise forms.ValidationError(str(exc)) from exc
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise forms.ValidationError(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    if not isinstance(value, dict):
        raise forms.ValidationError('must be a JSON object, like {"rate_limit": 0.5}')
    return value


class SiteUrlForm(forms.Form):
    url = forms.CharField(
        label="Site URL", max_length=500, widget=forms.URLInput(attrs={"placeholder": "https://example.com"})
    )


class SiteDetailsForm(forms.Form):
    """Step two: what the row will hold. `extra` holds settings keys set next to (or instead of) the preset."""

    url = forms.CharField(widget=forms.HiddenInput)
    base_url = forms.CharField(widget=forms.HiddenInput)
    # What the URL named: an html site, or MangaDex (read through its API, no preset).
    kind = forms.ChoiceField(
        choices=[("html", "html"), ("mangadex", "mangadex")], initial="html", required=False, widget=forms.HiddenInput
    )
    name = forms.CharField(max_length=200)
    source_id = forms.SlugField(label="Id", max_length=64, required=False, help_text="default: the name's slug")
    preset = forms.ChoiceField(
        choices=[(NO_PRESET, "(none: selectors in the extra settings)")] + [(p, p) for p in sorted(PRESETS)],
        required=False,
    )
    extra = forms.CharField(
        label="Extra settings (JSON)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60, "spellcheck": "false"}),
        help_text='keys next to the preset, e.g. {"image_hosts": ["cdn.example.com"], "rate_limit": 0.5}',
    )
    crawl_now = forms.BooleanField(label="Start the first crawl now", required=False)

    def clean_kind(self) -> str:
        return self.cleaned_data.get("kind") or "html"

    def clean_extra(self) -> dict[str, Any]:
        return parse_settings(self.cleaned_data.get("extra", ""))

    def settings(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {**({"preset": data["preset"]} if data.get("preset") else {}), **data["extra"]}


class SettingsForm(forms.Form):
    settings = forms.CharField(widget=forms.Textarea(attrs={"rows": 16, "cols": 80, "spellcheck": "false"}))

    def clean_settings(self) -> dict[str, Any]:
        return parse_settings(self.cleaned_data["settings"])


class SuwayomiServerForm(forms.Form):
    """A Suwayomi-Server and its credentials: step one of adding one of its sources."""

    server_url = forms.CharField(
        label="Suwayomi-Server URL",
        max_length=500,
        widget=forms.URLInput(attrs={"placeholder": "http://suwayomi:4567"}),
    )
    username = forms.CharField(max_length=200, required=False, help_text="when the server has auth on")
    password = forms.CharField(max_length=200, required=False, widget=forms.PasswordInput(render_value=True))
    auth = forms.ChoiceField(
        label="Auth mode",
        choices=[("basic", "Basic auth (BASIC_AUTH)"), ("login", "Login (UI_LOGIN)")],
        required=False,
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if bool(data.get("username")) != bool(data.get("password")):
            raise forms.ValidationError("give both the username and the password, or neither")
        return data

    def settings(self) -> dict[str, Any]:
        """The credentials as the source's settings keys (none when the server has no auth)."""
        data = self.cleaned_data
        if not data.get("username"):
            return {}
        return {
            "suwayomi_auth": data.get("auth") or "basic",
            "suwayomi_username": data["username"],
            "suwayomi_password": data["password"],
        }


class SuwayomiSourceForm(SuwayomiServerForm):
    """Step two: which of the server's sources, under what name and id."""

    source = forms.RegexField(regex=r"^-?\d{1,20}$", label="Source", max_length=21)
    name = forms.CharField(max_length=200, required=False)
    source_id = forms.SlugField(label="Id", max_length=64, required=False, help_text="default: the name's slug")
    crawl_now = forms.BooleanField(label="Start the first crawl now", required=False)
