"""S3 get/put of treadle.fileio against plain boto3 with the transfer manager, on a moto S3
server on 127.0.0.1 started here (needs boto3 and moto[server]).

Both sides use the same TransferConfig (8 MiB threshold and parts, 10 threads): plain boto3
is ``client.upload_fileobj(BytesIO(data), ...)`` and ``client.download_fileobj(..., BytesIO())``.
moto runs in this process, so it competes with the client for the GIL: the absolute numbers
are moto's, the ratio is what to read.

    python benchmarks/fileio_s3.py                  # 256 MiB, 5 rounds
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import statistics
import time

MiB = 1024 * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    import boto3
    from boto3.s3.transfer import TransferConfig
    from moto.server import ThreadedMotoServer

    import treadle.fileio as fileio

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    credentials = {
        "aws_access_key_id": "bench",
        "aws_secret_access_key": "bench",
        "region_name": "us-east-1",
    }
    transfer = {
        "multipart_threshold": 8 * MiB,
        "multipart_chunksize": 8 * MiB,
        "max_concurrency": 10,
    }
    client = boto3.session.Session().client("s3", endpoint_url=endpoint, **credentials)
    config = TransferConfig(**transfer)
    backend_args = {"endpoint_url": endpoint, **credentials, **transfer}
    client.create_bucket(Bucket="bench")
    data = os.urandom(args.mib * MiB)

    def boto3_put() -> None:
        client.upload_fileobj(io.BytesIO(data), "bench", "boto3.bin", Config=config)

    def boto3_get() -> bytes:
        buffer = io.BytesIO()
        client.download_fileobj("bench", "boto3.bin", buffer, Config=config)
        return buffer.getvalue()

    def treadle_put() -> None:
        fileio.put(data, "s3://bench/treadle.bin", backend_args=backend_args)

    def treadle_get() -> bytes:
        return fileio.get("s3://bench/treadle.bin", backend_args=backend_args)

    def timed(function) -> float:
        start = time.perf_counter()
        function()
        return time.perf_counter() - start

    treadle_put()  # warm up: the client, connections, the first objects
    boto3_put()
    assert treadle_get() == data and boto3_get() == data
    times: dict[str, list[float]] = {k: [] for k in ("boto3 put", "put", "boto3 get", "get")}
    for _ in range(args.rounds):  # alternated, so a slow spell of the machine hits both
        times["boto3 put"].append(timed(boto3_put))
        times["put"].append(timed(treadle_put))
        times["boto3 get"].append(timed(boto3_get))
        times["get"].append(timed(treadle_get))
    server.stop()

    print(f"{args.mib} MiB on a loopback moto S3 server, median of {args.rounds} rounds")
    for label in ("put", "get"):
        base = statistics.median(times[f"boto3 {label}"])
        mine = statistics.median(times[label])
        print(
            f"  {label}: treadle {mine * 1000:8.1f} ms   boto3 transfer manager "
            f"{base * 1000:8.1f} ms   ratio {mine / base:.3f}"
        )


if __name__ == "__main__":
    main()
