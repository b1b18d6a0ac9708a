"""Fixtures of the treadle-fileio tests: a loopback S3 server (moto), buckets, a proxy that
fails on purpose, and registries restored after each test.

boto3 and moto are optional: the S3 fixtures skip their tests when either is missing, so the
rest runs in an environment with nothing but treadle-fileio installed.
"""

from __future__ import annotations

import pytest
from s3_server import moto_endpoint, new_bucket, use_moto  # noqa: F401 (a fixture)
from storage_proxy import FaultyProxy

from treadle.fileio import backends, file_handlers
from treadle.fileio.backends import registry_utils

ERROR_BODY = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    "<Error><Code>{code}</Code><Message>failing on purpose</Message>"
    "<RequestId>treadle-test</RequestId></Error>"
)


@pytest.fixture(autouse=True)
def restore_registries():
    """Backends and handlers a test registers do not outlive it."""
    saved = (
        dict(backends.backends),
        dict(backends.prefix_to_backends),
        dict(file_handlers),
        dict(registry_utils.backend_instances),
    )
    yield
    for target, snapshot in zip(
        (
            backends.backends,
            backends.prefix_to_backends,
            file_handlers,
            registry_utils.backend_instances,
        ),
        saved,
        strict=True,
    ):
        target.clear()
        target.update(snapshot)


@pytest.fixture
def s3_env(moto_endpoint, monkeypatch, tmp_path):  # noqa: F811 (the imported fixture)
    """AWS configuration from the environment only, pointing at the moto server."""
    use_moto(moto_endpoint, monkeypatch, tmp_path)
    return moto_endpoint


@pytest.fixture
def s3_client(s3_env):
    """A plain boto3 client on the moto server, to check what the backend did."""
    import boto3

    return boto3.client("s3", endpoint_url=s3_env)


@pytest.fixture
def bucket(s3_env) -> str:
    """A new, empty bucket."""
    return new_bucket(s3_env)


@pytest.fixture
def faulty_proxy(s3_env):
    proxy = FaultyProxy(s3_env)
    yield proxy
    proxy.close()
