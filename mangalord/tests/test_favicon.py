"""`/favicon.ico` answers an icon, so no page logs a 404 for it."""

from __future__ import annotations

import io

import pytest
from PIL import Image


@pytest.mark.sqlite_ok
def test_favicon_is_an_icon_cached_for_a_day(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response["Content-Type"] == "image/x-icon"
    assert "max-age=86400" in response["Cache-Control"]
    icon = Image.open(io.BytesIO(response.content))
    assert icon.format == "ICO" and (32, 32) in icon.info["sizes"]
