"""S3 reached through ``backend_args`` only, for the tests that check a run configured the
MMEngine way (``CheckpointHook(backend_args=dict(endpoint_url=..., aws_access_key_id=...))``)
never falls back on the environment's AWS settings.

``without_aws_environment`` removes every ``AWS_*`` variable and points the AWS config files
at missing paths, so a client made without the endpoint and credentials of ``backend_args``
finds none and fails. ``new_bucket`` and ``objects`` talk to the moto server of
:mod:`s3_server` with the test credentials given explicitly.

Example:
    >>> def test_x(moto_endpoint, monkeypatch, tmp_path):
    ...     without_aws_environment(monkeypatch, tmp_path)
    ...     bucket = new_bucket(moto_endpoint)
    ...     args = s3_backend_args(moto_endpoint)
"""

from __future__ import annotations

import os

import pytest

from treadle.fileio.backends import registry_utils

CREDENTIALS = dict(
    aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
)


def s3_backend_args(endpoint: str) -> dict:
    """CheckpointHook's ``backend_args`` for the moto server at ``endpoint``."""
    return dict(backend="s3", endpoint_url=endpoint, **CREDENTIALS)


def without_aws_environment(patch: pytest.MonkeyPatch, tmp_path) -> None:
    """No AWS endpoint, credentials, profile or config file of the environment's (or the
    user's) can be used: only what backend_args give."""
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        patch.delenv(name)
    patch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    patch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    patch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no wait for an instance's credentials
    patch.setattr(registry_utils, "backend_instances", {})  # no client made with other settings


def _client(endpoint: str):
    boto3 = pytest.importorskip("boto3")
    return boto3.client("s3", endpoint_url=endpoint, **CREDENTIALS)


def new_bucket(endpoint: str) -> str:
    """A new bucket with a fresh name on ``endpoint``."""
    name = f"treadle-{os.urandom(8).hex()}"
    _client(endpoint).create_bucket(Bucket=name)
    return name


def objects(endpoint: str, bucket: str) -> list[str]:
    """The keys of every object in ``bucket``, sorted."""
    listing = _client(endpoint).list_objects_v2(Bucket=bucket)
    return sorted(item["Key"] for item in listing.get("Contents", []))


def garble(endpoint: str, bucket: str, key: str) -> None:
    """Flip a byte in the middle of the object ``key`` (its size unchanged)."""
    client = _client(endpoint)
    data = bytearray(client.get_object(Bucket=bucket, Key=key)["Body"].read())
    data[len(data) // 2] ^= 0xFF
    client.put_object(Bucket=bucket, Key=key, Body=bytes(data))
