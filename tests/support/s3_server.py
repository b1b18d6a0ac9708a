"""An S3 server (moto) on loopback for the tests that read or write ``s3://`` paths: those of
treadle-fileio's S3 backend and those of the runner's checkpoint loader and hooks.

This module imports nothing but pytest and treadle.fileio (boto3 and moto only inside the
fixtures), because tests/fileio runs in an environment with treadle-fileio alone. Without
boto3 or moto the fixtures skip their tests.

Import the fixtures into a test module or a conftest: ``from s3_server import bucket,
moto_endpoint``. ``moto_endpoint`` starts one server per module that imports it and keeps it
for the session. ``bucket`` points the AWS environment at it, gives the test empty
treadle.fileio backend singletons (a client made for an earlier endpoint would outlive its
server) and a new bucket. ``use_moto`` and ``new_bucket`` are the same steps for fixtures that
need them apart.

Example:
    >>> def test_upload(bucket):
    ...     fileio.put_text('x', f's3://{bucket}/a.txt')
"""

from __future__ import annotations

import logging
import uuid

import pytest

from treadle.fileio.backends import registry_utils


@pytest.fixture(scope="session")
def moto_endpoint():
    """The URL of a moto S3 server on 127.0.0.1, for the whole session."""
    pytest.importorskip("boto3")
    moto_server = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request otherwise
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def use_moto(endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """AWS configuration from the environment only, pointing at ``endpoint``: no profile,
    config file or credentials of the user's can reach the test."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)


def new_bucket(endpoint: str) -> str:
    """Creates a bucket with a fresh name on ``endpoint`` and returns the name."""
    import boto3

    name = f"treadle-{uuid.uuid4().hex[:16]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=name)
    return name


@pytest.fixture
def bucket(moto_endpoint, monkeypatch, tmp_path) -> str:
    """A new, empty bucket on the moto server, with the environment pointing at it."""
    use_moto(moto_endpoint, monkeypatch, tmp_path)
    monkeypatch.setattr(registry_utils, "backend_instances", {})
    return new_bucket(moto_endpoint)
