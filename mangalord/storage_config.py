"""The S3 storage backend's options from the S3_* variables; an incomplete set names what is missing."""

from typing import Any

from django.core.exceptions import ImproperlyConfigured

from mangalord.env_readers import env, read


def s3_storage() -> dict[str, Any]:
    """django-storages' S3 backend (catalog/s3.py) from the S3_* variables; an incomplete set names what is missing."""
    from catalog.s3 import storage_config

    bucket = read("S3_BUCKET", env.str, "")
    if not bucket:
        raise ImproperlyConfigured("Missing environment variable S3_BUCKET: STORAGE_BACKEND=s3 needs a bucket name")
    endpoint = read(
        "S3_ENDPOINT_URL",
        env.str,
        "",
        lambda v: not v or v.startswith(("http://", "https://")),
        "must be an http(s) URL such as http://minio.internal:9000 (empty: AWS S3)",
    )
    access_key = read("S3_ACCESS_KEY_ID", env.str, "")
    secret_key = read("S3_SECRET_ACCESS_KEY", env.str, "")
    if bool(access_key) != bool(secret_key):
        missing = "S3_SECRET_ACCESS_KEY" if access_key else "S3_ACCESS_KEY_ID"
        raise ImproperlyConfigured(
            f"Missing environment variable {missing}: set both S3 keys, or neither to use boto3's default credentials"
        )
    prefix = read(
        "S3_KEY_PREFIX",
        env.str,
        "",
        lambda v: not v.startswith("/") and ".." not in v.split("/"),
        "must be a relative key prefix such as mangalord/media",
    )
    return storage_config(
        bucket=bucket,
        endpoint_url=endpoint,
        region=read("S3_REGION", env.str, ""),
        access_key=access_key,
        secret_key=secret_key,
        key_prefix=prefix,
        addressing_style=read(
            "S3_ADDRESSING_STYLE",
            env.str,
            "auto",
            lambda v: v in {"auto", "path", "virtual"},
            "must be 'auto', 'path' (MinIO and most self-hosted servers) or 'virtual'",
        ),
    )
