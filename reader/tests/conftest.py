"""Reader personas and the schema validators every feed test uses."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from lxml import etree

SCHEMAS = Path(__file__).parent / "schemas"
PASSWORD = "alice-password"


def basic(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


@pytest.fixture
def inactive(django_user_model):
    return django_user_model.objects.create_user("ian", "ian@example.com", "ian-password", is_active=False)


@pytest.fixture(scope="session")
def opds_schema() -> etree.RelaxNG:
    return etree.RelaxNG(etree.parse(str(SCHEMAS / "opds.rng")))


@pytest.fixture(scope="session")
def comicinfo_schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "ComicInfo-v2.0.xsd")))


def substitute_pse(xml: bytes) -> bytes:
    """PSE href templates become concrete URLs, as a client fills them in, before schema validation."""
    return re.sub(rb"\{pageNumber\}", b"0", re.sub(rb"\{maxWidth\}", b"800", xml))


def assert_valid_opds(schema: etree.RelaxNG, xml: bytes) -> etree._Element:
    doc = etree.fromstring(substitute_pse(xml))
    assert schema.validate(doc), f"{schema.error_log}\n{xml.decode()[:3000]}"
    return doc
