"""The engine's settings renamed from CRAWLER_* to JOBS_*: the old names still read for a release, with a warning."""

import json

import pytest
from django.core.exceptions import ImproperlyConfigured

from mangalord.renamed_env import RENAMED, resolve
from mangalord.tests.test_settings import start

pytestmark = pytest.mark.sqlite_ok


def test_the_new_name_alone_is_read_as_it_is_and_warns_nothing():
    assert resolve({"JOBS_LEASE_SECS": "90"}) == ({}, [])


def test_an_old_name_is_read_under_the_new_one_with_a_warning_naming_it():
    values, warnings = resolve({"CRAWLER_LEASE_SECS": "90"})
    assert values == {"JOBS_LEASE_SECS": "90"}
    assert len(warnings) == 1
    assert "CRAWLER_LEASE_SECS" in warnings[0] and "JOBS_LEASE_SECS" in warnings[0]


def test_both_names_with_the_same_value_read_the_new_one_and_warn_about_the_old():
    values, warnings = resolve({"CRAWLER_POLL_SECS": "2", "JOBS_POLL_SECS": "2"})
    assert values == {"JOBS_POLL_SECS": "2"}
    assert ["CRAWLER_POLL_SECS" in w for w in warnings] == [True]


def test_both_names_with_different_values_are_an_error_naming_both():
    with pytest.raises(ImproperlyConfigured) as error:
        resolve({"CRAWLER_WORKERS": "3", "JOBS_WORKERS": "4"})
    assert "CRAWLER_WORKERS='3'" in str(error.value) and "JOBS_WORKERS='4'" in str(error.value)


def test_every_renamed_setting_is_a_jobs_setting_replacing_a_crawler_one():
    assert all(new == "JOBS_" + old.removeprefix("CRAWLER_") for new, old in RENAMED.items())
    assert len(set(RENAMED.values())) == len(RENAMED)


def test_a_process_started_with_an_old_name_runs_with_its_value_and_says_the_new_name(tmp_path):
    result = start(tmp_path, CRAWLER_WORKERS="7", CRAWLER_DONE_RETENTION_DAYS="0")
    assert result.returncode == 0, result.stderr
    assert (json.loads(result.stdout)["workers"], json.loads(result.stdout)["retention"]) == (7, 0)
    assert "CRAWLER_WORKERS is deprecated" in result.stderr and "rename it to JOBS_WORKERS" in result.stderr


def test_a_process_started_with_both_names_disagreeing_stops_naming_both(tmp_path):
    result = start(tmp_path, CRAWLER_LEASE_SECS="60", JOBS_LEASE_SECS="90")
    assert result.returncode != 0
    assert "CRAWLER_LEASE_SECS" in result.stderr and "JOBS_LEASE_SECS" in result.stderr
