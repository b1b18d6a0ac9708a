"""An S3 bucket on a moto server on loopback, for the hooks-b tests (CheckpointHook and
LoggerHook with an ``s3://`` out_dir).

Import both fixtures into a test module: ``from hooks_b_s3 import bucket, moto_endpoint``.
One server serves the whole session. Each test gets a new bucket and empty treadle.fileio
backend singletons (a client made for an earlier endpoint would outlive its server), and the
previous singletons come back after it.

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
    pytest.importorskip("boto3")
    moto_server = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def bucket(moto_endpoint, monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setattr(registry_utils, "backend_instances", {})
    import boto3

    name = f"treadle-{uuid.uuid4().hex[:16]}"
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket=name)
    return name
