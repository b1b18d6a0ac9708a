"""A slow S3 endpoint: a request that outlasts the client's read timeout is retried like a
5xx, and one that is slow every time ends in a StorageError naming bucket and key."""

from __future__ import annotations

import pytest
import storage_proxy

from treadle import fileio
from treadle.fileio import StorageError


@pytest.fixture
def slow_proxy(moto_endpoint):
    proxy = storage_proxy.FaultyProxy(moto_endpoint)
    yield proxy
    proxy.close()


def args(proxy) -> dict:
    return {
        "endpoint_url": proxy.url,
        "max_attempts": 3,
        "backoff": 0.001,
        "client_config": {"read_timeout": 0.2, "connect_timeout": 1},
    }


def of(key: str, method: str):
    return lambda m, p: m == method and p.split("?")[0].endswith("/" + key)


def test_a_slow_read_is_retried(slow_proxy, bucket):
    fileio.put(b"payload", f"s3://{bucket}/slow.txt")
    slow_proxy.fail(of("slow.txt", "GET"), ("slow", 0.6), times=1)
    assert fileio.get(f"s3://{bucket}/slow.txt", backend_args=args(slow_proxy)) == b"payload"
    assert slow_proxy.count("GET", "/slow.txt") == 2


def test_a_slow_write_is_retried(slow_proxy, bucket):
    slow_proxy.fail(of("w.txt", "PUT"), ("slow", 0.6), times=1)
    fileio.put(b"written", f"s3://{bucket}/w.txt", backend_args=args(slow_proxy))
    assert fileio.get(f"s3://{bucket}/w.txt") == b"written"
    assert slow_proxy.count("PUT", "/w.txt") == 2


def test_always_slow_ends_in_an_error_naming_the_key(slow_proxy, bucket):
    fileio.put(b"payload", f"s3://{bucket}/never.txt")
    slow_proxy.fail(of("never.txt", "GET"), ("slow", 0.4), times=None)
    with pytest.raises(
        StorageError, match=rf"bucket '{bucket}', key 'never.txt'\) failed after 3 attempts"
    ):
        fileio.get(f"s3://{bucket}/never.txt", backend_args=args(slow_proxy))
