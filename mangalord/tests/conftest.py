"""The readers' schema validators, for the end-to-end tests here: parsed once a session, shared with reader/tests."""

from reader.tests.conftest import comicinfo_schema, opds_schema

__all__ = ["comicinfo_schema", "opds_schema"]
