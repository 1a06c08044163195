"""The demo routes every console handler of the project's logging to its log file, keeping formats and filters."""

from __future__ import annotations

import logging
import logging.config

import pytest
from django.conf import settings

from demo.logfile import file_logging, log_to_file

pytestmark = pytest.mark.sqlite_ok


def test_stream_handlers_become_one_file_with_their_format_and_masking_kept(tmp_path):
    routed = file_logging(settings.LOGGING, tmp_path / "demo.log")
    console = routed["handlers"]["console"]
    assert console == {
        "class": "logging.FileHandler",
        "filename": str(tmp_path / "demo.log"),
        "encoding": "utf-8",
        "formatter": "structured",
        "filters": ["mask_api_keys"],
    }
    assert routed["loggers"] == settings.LOGGING["loggers"]
    assert settings.LOGGING["handlers"]["console"]["class"] == "logging.StreamHandler"  # the original is untouched


def test_a_log_line_lands_in_the_file_not_on_the_console(tmp_path, capsys):
    original = settings.LOGGING
    try:
        path = log_to_file(tmp_path / "data" / "demo.log")
        logging.getLogger("crawler.demo_test").warning("a line for the file /key/mlk_%s/opds/", "k" * 40)
        for handler in logging.getLogger().handlers:
            handler.flush()
        captured = capsys.readouterr()
        assert "a line for the file" not in captured.out + captured.err
        text = path.read_text()
        assert "level=WARNING logger=crawler.demo_test" in text and "k" * 40 not in text  # masked as on a console
        assert settings.LOGGING["handlers"]["console"]["filename"] == str(path)  # a second django.setup() keeps it
    finally:
        settings.LOGGING = original
        logging.config.dictConfig(original)
