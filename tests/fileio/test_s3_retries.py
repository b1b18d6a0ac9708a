"""Transient S3 errors are retried with backoff, then reported with bucket and key; a failed
upload leaves nothing behind. A proxy in front of the moto server fails requests on purpose.

botocore's own retries are off in S3Backend, so every request the proxy sees is one try of
ours: the counts below are exact.
"""

from __future__ import annotations

import os

import pytest

from treadle import fileio
from treadle.fileio import StorageError

MiB = 1024 * 1024


def args(proxy, **extra) -> dict:
    return {"endpoint_url": proxy.url, "max_attempts": 3, "backoff": 0.001, **extra}


def is_object(key: str, method: str):
    return lambda m, p: m == method and p.split("?")[0].endswith("/" + key)


@pytest.mark.parametrize(
    "fault", [(503, "ServiceUnavailable"), (503, "SlowDown"), (500, "InternalError"), "reset"]
)
def test_transient_errors_are_retried(faulty_proxy, bucket, fault):
    fileio.put(b"payload", f"s3://{bucket}/k.txt")
    faulty_proxy.fail(is_object("k.txt", "GET"), fault, times=2)
    assert fileio.get(f"s3://{bucket}/k.txt", backend_args=args(faulty_proxy)) == b"payload"
    assert faulty_proxy.count("GET", "/k.txt") == 3


def test_throttled_writes_are_retried(faulty_proxy, bucket):
    faulty_proxy.fail(is_object("w.txt", "PUT"), (503, "SlowDown"), times=2)
    fileio.put(b"written", f"s3://{bucket}/w.txt", backend_args=args(faulty_proxy))
    assert fileio.get(f"s3://{bucket}/w.txt") == b"written"
    assert faulty_proxy.count("PUT", "/w.txt") == 3


def test_errors_after_the_last_attempt_name_bucket_and_key(faulty_proxy, bucket):
    fileio.put(b"payload", f"s3://{bucket}/dir/k.txt")
    faulty_proxy.fail(is_object("k.txt", "GET"), (503, "SlowDown"), times=None)
    with pytest.raises(
        StorageError,
        match=rf"bucket '{bucket}', key 'dir/k.txt'\) failed after 3 attempts.*SlowDown",
    ) as info:
        fileio.get(f"s3://{bucket}/dir/k.txt", backend_args=args(faulty_proxy))
    assert (info.value.bucket, info.value.key) == (bucket, "dir/k.txt")
    assert info.value.__cause__ is not None  # boto3's error, chained
    assert faulty_proxy.count("GET", "/dir/k.txt") == 3


def test_resets_after_the_last_attempt(faulty_proxy, bucket):
    faulty_proxy.fail(is_object("r.txt", "PUT"), "reset", times=None)
    with pytest.raises(StorageError, match=r"key 'r.txt'\) failed after 2 attempts"):
        fileio.put(b"x", f"s3://{bucket}/r.txt", backend_args=args(faulty_proxy, max_attempts=2))
    assert faulty_proxy.count("PUT", "/r.txt") == 2


def test_unreachable_endpoint(bucket):
    unreachable = {"endpoint_url": "http://127.0.0.1:9", "max_attempts": 2, "backoff": 0.001}
    with pytest.raises(
        StorageError, match=rf"bucket '{bucket}', key 'x'\) failed after 2 attempts"
    ):
        fileio.get(f"s3://{bucket}/x", backend_args=unreachable)


def test_errors_that_are_not_transient_are_not_retried(faulty_proxy, bucket):
    faulty_proxy.fail(is_object("denied.txt", "GET"), (403, "AccessDenied"), times=None)
    with pytest.raises(StorageError, match=r"key 'denied.txt'\) failed: .*AccessDenied"):
        fileio.get(f"s3://{bucket}/denied.txt", backend_args=args(faulty_proxy))
    assert faulty_proxy.count("GET", "/denied.txt") == 1


def test_a_failed_part_is_sent_again_alone(faulty_proxy, bucket):
    data = os.urandom(12 * MiB)
    backend_args = args(faulty_proxy, multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    part_2 = lambda m, p: m == "PUT" and "partNumber=2" in p  # noqa: E731
    faulty_proxy.fail(part_2, (503, "SlowDown"), times=1)
    fileio.put(data, f"s3://{bucket}/multi.bin", backend_args=backend_args)
    assert faulty_proxy.count("PUT", "partNumber=") == 4  # three parts, one of them twice
    ranged = lambda m, p: m == "GET" and p.split("?")[0].endswith("/multi.bin")  # noqa: E731
    faulty_proxy.fail(ranged, (500, "InternalError"), times=1)
    assert fileio.get(f"s3://{bucket}/multi.bin", backend_args=backend_args) == data


def test_a_failed_upload_leaves_no_partial_object(faulty_proxy, bucket, s3_client):
    data = os.urandom(12 * MiB)
    backend_args = args(faulty_proxy, multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    faulty_proxy.fail(lambda m, p: m == "PUT" and "partNumber=3" in p, (503, "SlowDown"), None)
    with pytest.raises(StorageError, match=rf"bucket '{bucket}', key 'partial.bin'"):
        fileio.put(data, f"s3://{bucket}/partial.bin", backend_args=backend_args)
    assert s3_client.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
    assert "Uploads" not in s3_client.list_multipart_uploads(Bucket=bucket)  # aborted


def test_retry_settings_are_checked(bucket):
    with pytest.raises(ValueError, match="max_attempts must be an int >= 1, got 0"):
        fileio.get(f"s3://{bucket}/x", backend_args={"max_attempts": 0})
