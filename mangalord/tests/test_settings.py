"""Settings come from the environment; a bad value stops start-up naming the variable."""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT

pytestmark = pytest.mark.sqlite_ok

PROBE = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "db = s.DATABASES['default']; "
    "print(json.dumps({'engine': db['ENGINE'], 'name': str(db['NAME']), 'options': db.get('OPTIONS', {}), "
    "'workers': s.JOBS_WORKERS, 'retention': s.JOBS_DONE_RETENTION_DAYS, 'backend': s.ANALYSIS_BACKEND}))"
)


def start(tmp_path, probe: str = PROBE, **env: str) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CRAWLER_", "JOBS_", "ANALYSIS_", "DATABASE_", "S3_", "STORAGE_"))
    }
    base.update(DJANGO_SETTINGS_MODULE="mangalord.settings", MANGALORD_DATA_DIR=str(tmp_path), PYTHONPATH=REPO_ROOT)
    return subprocess.run(
        [sys.executable, "-c", probe], env={**base, **env}, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )


def test_without_database_url_the_default_is_an_immediate_wal_sqlite_file_in_the_data_dir(tmp_path):
    result = start(tmp_path)
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert config["engine"] == "django.db.backends.sqlite3"
    assert config["name"] == str(tmp_path / "mangalord.sqlite3")
    assert config["options"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in config["options"]["init_command"]


def test_database_url_selects_postgresql(tmp_path):
    result = start(tmp_path, DATABASE_URL="postgres://u@db.internal:5432/lib")
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert (config["engine"], config["name"]) == ("django.db.backends.postgresql", "lib")


def test_valid_values_are_read_from_the_environment(tmp_path):
    result = start(tmp_path, JOBS_WORKERS="7", JOBS_DONE_RETENTION_DAYS="0", ANALYSIS_BACKEND="openai")
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert (config["workers"], config["retention"], config["backend"]) == (7, 0, "openai")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("JOBS_WORKERS", "many"),
        ("JOBS_WORKERS", "0"),
        ("JOBS_LEASE_SECS", "-5"),
        ("JOBS_DONE_RETENTION_DAYS", "-1"),
        ("JOBS_POLL_SECS", "soon"),
        ("DEBUG", "perhaps"),
        ("ANALYSIS_BACKEND", "gpu-cluster"),
        ("DATABASE_URL", "not-a-url"),
        ("DATABASE_POOLER", "pgpool"),
        ("DATABASE_DIRECT_URL", "mysql://u@db/lib"),
        ("LIBRARY_PUBLIC_READ", "ture"),
        ("API_THROTTLE_LOGIN", "10 per minute"),
        ("CRAWLER_S3_QUOTA", "5%"),
        ("CRAWLER_S3_QUOTA", "plenty"),
        ("CRAWLER_MAX_PAGE_BYTES", "0"),
        ("CRAWLER_PAGE_DEADLINE_SECS", "soon"),
        ("CRAWLER_IMAGE_DEADLINE_SECS", "-1"),
        ("OUTBOUND_ALLOWED_NETWORKS", "localhost"),
        ("OUTBOUND_ALLOWED_NETWORKS", "127.0.0.1/32,10.0.0.1/8"),
        ("NOTIFY_PUBLIC_URL", "manga.example.com"),
        ("NOTIFY_DIGEST_INTERVAL", "0"),
        ("NOTIFY_SEND_MAX_ATTEMPTS", "many"),
    ],
)
def test_a_bad_value_fails_at_start_up_naming_the_variable(tmp_path, variable, value):
    result = start(tmp_path, **{variable: value})
    assert result.returncode != 0
    assert f"environment variable {variable}" in result.stderr


def test_the_outbound_allowance_is_read_as_networks_and_a_bad_entry_is_named(tmp_path):
    probe = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(','.join(str(n) for n in s.OUTBOUND_ALLOWED_NETWORKS))"
    )
    result = start(tmp_path, probe, OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32, ::1/128,192.168.1.0/24")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "127.0.0.1/32,::1/128,192.168.1.0/24"
    assert start(tmp_path, probe, OUTBOUND_ALLOWED_NETWORKS="").stdout.strip() == ""  # the default: none
    result = start(tmp_path, probe, OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32,10.0.0.1/8")
    assert "OUTBOUND_ALLOWED_NETWORKS" in result.stderr and "'10.0.0.1/8' is not a network" in result.stderr


def test_the_address_lockout_limit_is_at_least_the_account_limit(tmp_path):
    result = start(tmp_path, LOGIN_FAILURE_LIMIT="10", LOGIN_ADDRESS_FAILURE_LIMIT="5")
    assert result.returncode != 0
    assert "LOGIN_ADDRESS_FAILURE_LIMIT" in result.stderr


def test_heartbeat_must_be_shorter_than_the_lease(tmp_path):
    result = start(tmp_path, JOBS_LEASE_SECS="10", JOBS_HEARTBEAT_SECS="10")
    assert result.returncode != 0
    assert "JOBS_HEARTBEAT_SECS" in result.stderr


POOLER_PROBE = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "db = s.DATABASES['default']; "
    "print(json.dumps({'ssc': db.get('DISABLE_SERVER_SIDE_CURSORS', False), "
    "'prepare': db.get('OPTIONS', {}).get('prepare_threshold', 'unset'), 'direct': s.DATABASE_DIRECT_URL}))"
)


def test_behind_pgbouncer_no_server_side_cursors_and_no_prepared_statements(tmp_path):
    result = start(
        tmp_path,
        POOLER_PROBE,
        DATABASE_URL="postgres://u@bouncer.internal:6432/lib",
        DATABASE_POOLER="pgbouncer",
        DATABASE_DIRECT_URL="postgres://u@db.internal:5432/lib",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"ssc": True, "prepare": None, "direct": "postgres://u@db.internal:5432/lib"}


def test_direct_postgresql_keeps_server_side_cursors(tmp_path):
    result = start(tmp_path, POOLER_PROBE, DATABASE_URL="postgres://u@db.internal:5432/lib")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ssc"] is False


def test_a_pooler_without_a_postgresql_database_url_is_refused(tmp_path):
    result = start(tmp_path, DATABASE_POOLER="pgbouncer")
    assert result.returncode != 0
    assert "environment variable DATABASE_POOLER" in result.stderr


STORAGE_PROBE = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "d = s.STORAGES['default']; o = d.get('OPTIONS', {}); "
    "print(json.dumps({'backend': d['BACKEND'], 'bucket': o.get('bucket_name'), 'endpoint': o.get('endpoint_url'), "
    "'prefix': o.get('location'), 'style': o.get('addressing_style'), 'region': o.get('region_name')}))"
)
S3_ENV = {
    "STORAGE_BACKEND": "s3",
    "S3_BUCKET": "library",
    "S3_ENDPOINT_URL": "http://minio.internal:9000",
    "S3_ACCESS_KEY_ID": "key",
    "S3_SECRET_ACCESS_KEY": "secret",
}


def test_s3_storage_is_selected_and_configured_from_the_environment(tmp_path):
    result = start(tmp_path, STORAGE_PROBE, **S3_ENV, S3_KEY_PREFIX="ml/media", S3_ADDRESSING_STYLE="path")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "backend": "catalog.s3.StreamingS3Storage",
        "bucket": "library",
        "endpoint": "http://minio.internal:9000",
        "prefix": "ml/media",
        "style": "path",
        "region": None,
    }


def test_the_default_storage_is_the_local_filesystem(tmp_path):
    result = start(tmp_path, STORAGE_PROBE)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["backend"] == "django.core.files.storage.FileSystemStorage"


@pytest.mark.parametrize(
    ("change", "variable"),
    [
        ({"S3_BUCKET": ""}, "S3_BUCKET"),
        ({"S3_SECRET_ACCESS_KEY": ""}, "S3_SECRET_ACCESS_KEY"),
        ({"S3_ACCESS_KEY_ID": ""}, "S3_ACCESS_KEY_ID"),
        ({"S3_ENDPOINT_URL": "minio:9000"}, "S3_ENDPOINT_URL"),
        ({"S3_ADDRESSING_STYLE": "dns"}, "S3_ADDRESSING_STYLE"),
        ({"S3_KEY_PREFIX": "../up"}, "S3_KEY_PREFIX"),
        ({"STORAGE_BACKEND": "gcs"}, "STORAGE_BACKEND"),
    ],
)
def test_an_incomplete_or_bad_s3_configuration_fails_naming_the_variable(tmp_path, change, variable):
    result = start(tmp_path, STORAGE_PROBE, **{**S3_ENV, **change})
    assert result.returncode != 0
    assert f"environment variable {variable}" in result.stderr
