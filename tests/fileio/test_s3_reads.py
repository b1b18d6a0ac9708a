"""S3Backend.get of a large object: the first part comes from the first GET, the others from
ranged GETs at the same time (no HEAD request); a part whose stream breaks is fetched again
alone; an object replaced while it is read is read again, whole.

Against the moto server, through the proxy of storage_proxy, which records every request's
Range header and cuts bodies short on purpose; the replacements are made from botocore's
``before-call`` event of the backend's own client.
"""

from __future__ import annotations

import os
import threading

import pytest

from treadle import fileio
from treadle.fileio import StorageError

MiB = 1024 * 1024
PARTS = {"multipart_threshold": MiB, "multipart_chunksize": MiB, "max_concurrency": 4}
RANGES = ["bytes=1048576-2097151", "bytes=2097152-3145727", "bytes=3145728-3145732"]


def args(proxy, **extra) -> dict:
    return {"endpoint_url": proxy.url, "max_attempts": 3, "backoff": 0.001, **PARTS, **extra}


def gets(proxy, key: str) -> list[str]:
    """The Range header of every GET of ``key`` ('' for none), sorted."""
    return sorted(
        r or "" for m, p, r in proxy.ranges if m == "GET" and p.split("?")[0].endswith("/" + key)
    )


def nth_get(key: str, numbers: set[int] | None):
    """A proxy match for the GETs of ``key`` whose rank (1 for the first) is in ``numbers``;
    from the second on when ``numbers`` is None."""
    seen = [0]

    def match(method: str, path: str) -> bool:
        if method != "GET" or not path.split("?")[0].endswith("/" + key):
            return False
        seen[0] += 1
        return seen[0] >= 2 if numbers is None else seen[0] in numbers

    return match


@pytest.fixture
def big(bucket, s3_client) -> bytes:
    """``big.bin``: four parts of PARTS, the last of 5 bytes."""
    data = os.urandom(3 * MiB + 5)
    s3_client.put_object(Bucket=bucket, Key="big.bin", Body=data)
    return data


def test_the_first_get_brings_the_first_part(faulty_proxy, bucket, big):
    assert fileio.get(f"s3://{bucket}/big.bin", backend_args=args(faulty_proxy)) == big
    assert gets(faulty_proxy, "big.bin") == ["", *RANGES]
    assert faulty_proxy.count("HEAD", "/big.bin") == 0


@pytest.mark.parametrize(
    "size, ranges", [(0, [""]), (MiB, [""]), (MiB + 1, ["", "bytes=1048576-1048576"])]
)
def test_one_get_up_to_the_threshold_then_parts(faulty_proxy, bucket, s3_client, size, ranges):
    data = os.urandom(size)
    s3_client.put_object(Bucket=bucket, Key="o.bin", Body=data)
    assert fileio.get(f"s3://{bucket}/o.bin", backend_args=args(faulty_proxy)) == data
    assert gets(faulty_proxy, "o.bin") == ranges


def test_more_parts_than_connections(faulty_proxy, bucket, big):
    backend_args = args(faulty_proxy, max_concurrency=2)  # the first GET's thread takes parts too
    assert fileio.get(f"s3://{bucket}/big.bin", backend_args=backend_args) == big
    assert gets(faulty_proxy, "big.bin") == ["", *RANGES]  # each part once


def test_one_connection_reads_one_stream(faulty_proxy, bucket, big):
    backend_args = args(faulty_proxy, max_concurrency=1)
    assert fileio.get(f"s3://{bucket}/big.bin", backend_args=backend_args) == big
    assert gets(faulty_proxy, "big.bin") == [""]


def test_a_first_part_cut_short_is_fetched_again_alone(faulty_proxy, bucket, big):
    faulty_proxy.fail(nth_get("big.bin", {1}), ("cut", 3), times=1)
    assert fileio.get(f"s3://{bucket}/big.bin", backend_args=args(faulty_proxy)) == big
    assert gets(faulty_proxy, "big.bin") == ["", "bytes=0-1048575", *RANGES]


def test_a_ranged_part_cut_short_is_fetched_again_alone(faulty_proxy, bucket, big):
    faulty_proxy.fail(nth_get("big.bin", {2}), ("cut", 3), times=1)
    assert fileio.get(f"s3://{bucket}/big.bin", backend_args=args(faulty_proxy)) == big
    ranges = gets(faulty_proxy, "big.bin")
    assert len(ranges) == 5 and sorted(set(ranges)) == ["", *RANGES]  # one of them twice


def test_parts_cut_short_every_time_end_in_an_error_naming_the_key(faulty_proxy, bucket, big):
    faulty_proxy.fail(nth_get("big.bin", None), ("cut", 3), times=None)
    with pytest.raises(
        StorageError, match=rf"bucket '{bucket}', key 'big.bin'\) failed after 3 attempts"
    ) as info:
        fileio.get(f"s3://{bucket}/big.bin", backend_args=args(faulty_proxy))
    assert info.value.__cause__ is not None  # botocore's error, chained
    assert len(gets(faulty_proxy, "big.bin")) <= 1 + 3 * 3  # three tries per part at most


def test_a_refused_part_is_not_retried(faulty_proxy, bucket, big):
    faulty_proxy.fail(nth_get("big.bin", None), (403, "AccessDenied"), times=None)
    with pytest.raises(StorageError, match=r"key 'big.bin'\) failed: .*AccessDenied"):
        fileio.get(f"s3://{bucket}/big.bin", backend_args=args(faulty_proxy))
    assert len(gets(faulty_proxy, "big.bin")) <= 4  # each part once at most


def replace_before_ranged_gets(backend, s3_client, bucket: str, times: int | None) -> list:
    """Before the next ``times`` ranged GETs of the backend (all when None), a new version of
    big.bin (another size, another ETag) is written. Returns the list of versions written."""
    lock = threading.Lock()
    written: list[bytes] = []

    def replace(params, **_) -> None:
        with lock:
            if "Range" in params["headers"] and (times is None or len(written) < times):
                written.append(os.urandom(2 * MiB + len(written) + 1))
                s3_client.put_object(Bucket=bucket, Key="big.bin", Body=written[-1])

    backend.client.meta.events.register("before-call.s3.GetObject", replace)
    return written


def test_an_object_replaced_while_read_is_read_again_whole(bucket, s3_client, big):
    backend = fileio.get_file_backend(f"s3://{bucket}", backend_args={**PARTS, "backoff": 0.001})
    written = replace_before_ranged_gets(backend, s3_client, bucket, times=1)
    assert backend.get(f"s3://{bucket}/big.bin") == written[0]  # the new version, whole


def test_without_etags_a_replacement_shows_as_another_size(bucket, s3_client, big):
    backend = fileio.get_file_backend(f"s3://{bucket}", backend_args={**PARTS, "backoff": 0.001})

    def no_etag(parsed, **_) -> None:  # as a store that sends no ETag
        parsed.pop("ETag", None)

    backend.client.meta.events.register("after-call.s3.GetObject", no_etag)
    written = replace_before_ranged_gets(backend, s3_client, bucket, times=1)
    assert backend.get(f"s3://{bucket}/big.bin") == written[0]


def test_an_object_replaced_at_every_try_ends_in_an_error(bucket, s3_client, big):
    backend_args = {**PARTS, "backoff": 0.001, "max_attempts": 3}
    backend = fileio.get_file_backend(f"s3://{bucket}", backend_args=backend_args)
    replace_before_ranged_gets(backend, s3_client, bucket, times=None)
    with pytest.raises(
        StorageError,
        match=rf"get of 's3://{bucket}/big.bin' \(bucket '{bucket}', key 'big.bin'\) failed: "
        r"the object was replaced while it was read, 3 times in a row",
    ) as info:
        backend.get(f"s3://{bucket}/big.bin")
    assert (info.value.bucket, info.value.key) == (bucket, "big.bin")
