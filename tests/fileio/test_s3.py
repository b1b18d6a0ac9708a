"""S3Backend against a moto S3 server on 127.0.0.1: real HTTP, real boto3, nothing patched."""

from __future__ import annotations

import concurrent.futures
import os
import urllib.request

import pytest

from treadle import fileio

MiB = 1024 * 1024
# S3 parts are at least 5 MiB (but the last); moto enforces it.
MULTIPART = {"multipart_threshold": 5 * MiB, "multipart_chunksize": 5 * MiB, "max_concurrency": 4}


def test_configuration_from_the_environment(bucket, s3_env):
    fileio.put(b"env", f"s3://{bucket}/env.txt")  # AWS_ENDPOINT_URL and keys from s3_env
    assert fileio.get(f"s3://{bucket}/env.txt") == b"env"


def test_backend_args_override_the_environment(bucket, s3_env, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    args = {
        "endpoint_url": s3_env,
        "aws_access_key_id": "other",
        "aws_secret_access_key": "other",
        "region_name": "us-east-1",
    }
    fileio.put(b"args", f"s3://{bucket}/args.txt", backend_args=args)
    assert fileio.get(f"s3://{bucket}/args.txt", backend_args=args) == b"args"


def test_one_client_per_backend_shared_by_threads(bucket):
    args = {"max_concurrency": 8}
    backend = fileio.get_file_backend(f"s3://{bucket}", backend_args=args, enable_singleton=True)
    assert (
        fileio.get_file_backend(f"s3://{bucket}/x", backend_args=args, enable_singleton=True)
        is backend
    )
    client = backend.client

    def round_trip(index: int) -> bytes:
        fileio.put(str(index).encode(), f"s3://{bucket}/threads/{index}", backend_args=args)
        return fileio.get(f"s3://{bucket}/threads/{index}", backend_args=args)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(round_trip, range(64)))
    assert results == [str(i).encode() for i in range(64)]
    assert backend.client is client


def test_path_mapping(bucket):
    args = {"path_mapping": {"data/": f"s3://{bucket}/mapped/"}}
    fileio.put(b"mapped", f"s3://{bucket}/mapped/a.txt")
    backend = fileio.get_file_backend(backend_args={"backend": "s3", **args})
    assert backend.get("data/a.txt") == b"mapped"
    assert backend.isfile("data/a.txt")
    assert list(backend.list_dir_or_file("data/")) == ["a.txt"]


def test_multipart_round_trip(bucket, s3_client, tmp_path):
    data = os.urandom(12 * MiB + 123)  # three parts: 5 + 5 + 2 MiB
    target = f"s3://{bucket}/big/object.bin"
    fileio.put(data, target, backend_args=MULTIPART)
    # A multipart object's ETag ends with the number of its parts.
    assert s3_client.head_object(Bucket=bucket, Key="big/object.bin")["ETag"].endswith('-3"')
    assert fileio.get(target, backend_args=MULTIPART) == data

    local = tmp_path / "big.bin"
    local.write_bytes(data)
    fileio.copyfile_from_local(local, f"s3://{bucket}/big/uploaded.bin", backend_args=MULTIPART)
    etag = s3_client.head_object(Bucket=bucket, Key="big/uploaded.bin")["ETag"]
    assert etag.endswith('-3"')
    out = fileio.copyfile_to_local(
        f"s3://{bucket}/big/uploaded.bin", tmp_path / "down.bin", backend_args=MULTIPART
    )
    assert pathlib_bytes(out) == data
    assert (
        fileio.copyfile(
            f"s3://{bucket}/big/uploaded.bin",
            f"s3://{bucket}/big/copied.bin",
            backend_args=MULTIPART,
        )
        == f"s3://{bucket}/big/copied.bin"
    )
    assert fileio.get(f"s3://{bucket}/big/copied.bin") == data


def pathlib_bytes(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def test_listing_thousands_of_keys(bucket, s3_client):
    keys = [f"many/{i // 1000}/{i:05d}.txt" for i in range(2100)]
    keys += ["many/top.bin"]

    def upload(key: str) -> None:
        s3_client.put_object(Bucket=bucket, Key=key, Body=b"")

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(upload, keys))
    root = f"s3://{bucket}/many"
    files = list(fileio.list_dir_or_file(root, list_dir=False, recursive=True))
    assert len(files) == len(set(files)) == 2101  # three pages of 1000 keys, nothing twice
    assert set(files) == {k.removeprefix("many/") for k in keys}
    assert set(fileio.list_dir_or_file(root)) == {"0", "1", "2", "top.bin"}
    assert len(list(fileio.list_dir_or_file(f"{root}/1", list_dir=False, suffix=".txt"))) == 1000
    fileio.rmtree(root)  # deletes in batches of 1000
    assert s3_client.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_presigned_url_fetched_over_http(bucket):
    fileio.put(b"shared without credentials", f"s3://{bucket}/share/a.txt")
    url = fileio.generate_presigned_url(f"s3://{bucket}/share/a.txt", expires_in=60)
    assert "Signature" in url or "X-Amz-Signature" in url
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.read() == b"shared without credentials"

    upload_url = fileio.generate_presigned_url(
        f"s3://{bucket}/share/b.txt", client_method="put_object"
    )
    request = urllib.request.Request(
        upload_url,
        data=b"uploaded",
        method="PUT",
        headers={"Content-Type": "application/octet-stream"},  # urllib would say form data
    )
    with urllib.request.urlopen(request, timeout=10):
        pass
    assert fileio.get(f"s3://{bucket}/share/b.txt") == b"uploaded"


def test_bucket_root_and_missing_bucket(bucket):
    assert fileio.isdir(f"s3://{bucket}")
    assert fileio.exists(f"s3://{bucket}/")
    assert list(fileio.list_dir_or_file(f"s3://{bucket}")) == []
    assert not fileio.exists("s3://treadle-no-such-bucket/key")
    with pytest.raises(FileNotFoundError, match="bucket 'treadle-no-such-bucket' does not exist"):
        fileio.get("s3://treadle-no-such-bucket/key")


def test_paths_that_are_not_s3(bucket):
    backend = fileio.get_file_backend(f"s3://{bucket}")
    with pytest.raises(
        ValueError, match="S3Backend serves s3://bucket/key paths, got 'memory://x'"
    ):
        backend.get("memory://x")
    with pytest.raises(ValueError, match="got 's3:///key'"):
        backend.get("s3:///key")


def test_cluster_name_prefix_is_ignored(bucket):
    fileio.put(b"x", f"cluster1:s3://{bucket}/c.txt")
    assert fileio.get(f"s3://{bucket}/c.txt") == b"x"
