"""S3 get/put of treadle.fileio against plain boto3, on a moto S3 server on 127.0.0.1 started
here (needs boto3 and moto[server]).

"Plain boto3" is what a user who reads and writes whole objects in memory with boto3 writes:
``client.download_fileobj(bucket, key, buffer, Config=config)`` into an ``io.BytesIO`` and its
``getvalue()``, and ``client.upload_fileobj(io.BytesIO(data), bucket, key, Config=config)``,
on a client of its own (boto3's defaults). Both sides are given the same endpoint and keys
and the same TransferConfig: 8 MiB threshold, 8 MiB parts, 10 connections at a time, so both
fetch a large object in 8 MiB ranges, 10 at a time, and upload it in 8 MiB parts. (treadle's
``get`` reads the first part from its first GET instead of asking for the size with a HEAD
request first; boto3's transfer manager sends HEAD, then a GET per part.)

Each round times boto3 and treadle back to back, in alternating order; the tables show the
medians of the rounds and of the per-round ratios, wall time and CPU time (of this process:
the client's threads, and with ``--server thread`` moto's too). Speed is boto3's time divided
by treadle's: above 1, treadle is faster.

``--server thread`` (the default) runs moto in this process, where it competes with the
client for the GIL; ``--server process`` runs it in a process of its own, as a real server
is, and the CPU time is then the client's alone. moto reads the whole object for every GET,
ranged or not, so its absolute numbers say little about a real store; the ratio is what to read.

    python benchmarks/fileio_s3.py                      # 64 MiB, 15 rounds, moto in-process
    python benchmarks/fileio_s3.py --server process --mib 256 --rounds 7
"""

from __future__ import annotations

import argparse
import io
import logging
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable

MiB = 1024 * 1024


def _serve(connection) -> None:
    """A moto server in this (child) process, until the parent sends something."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    connection.send(server.get_host_and_port())
    connection.recv()
    server.stop()


def start_server(where: str) -> tuple[str, Callable[[], None]]:
    """The endpoint URL of a new moto server and the function that stops it."""
    if where == "process":
        parent, child = multiprocessing.Pipe()
        process = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(child,), daemon=True
        )
        process.start()
        host, port = parent.recv()

        def stop() -> None:
            parent.send(None)
            process.join(10)

        return f"http://{host}:{port}", stop
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return f"http://{host}:{port}", server.stop


def measure(function: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    cpu = time.process_time()
    wall = time.perf_counter()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--server", choices=("thread", "process"), default="thread")
    args = parser.parse_args()

    import boto3
    from boto3.s3.transfer import TransferConfig

    import treadle.fileio as fileio

    endpoint, stop = start_server(args.server)
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

    treadle_put()  # warm up: the clients, connections, the first objects
    boto3_put()
    assert treadle_get() == data and boto3_get() == data
    pairs = {"put": (boto3_put, treadle_put), "get": (boto3_get, treadle_get)}
    times: dict[str, list[tuple[float, float]]] = {
        f"{side} {op}": [] for op in pairs for side in ("boto3", "treadle")
    }
    for round_ in range(args.rounds):
        for op, (plain, treadle) in pairs.items():
            # Alternated, so that a slow spell of the machine hits both sides alike.
            order = [("boto3", plain), ("treadle", treadle)]
            for side, function in order if round_ % 2 == 0 else order[::-1]:
                times[f"{side} {op}"].append(measure(function))
    stop()

    print(
        f"{args.mib} MiB, moto on 127.0.0.1 (server in a {args.server}), median of "
        f"{args.rounds} rounds; speed = boto3's time / treadle's (above 1: treadle faster)"
    )
    for op in pairs:
        base, mine = times[f"boto3 {op}"], times[f"treadle {op}"]
        for index, kind in ((0, "wall"), (1, "CPU ")):
            b = statistics.median(t[index] for t in base)
            m = statistics.median(t[index] for t in mine)
            paired = statistics.median(x[index] / y[index] for x, y in zip(base, mine, strict=True))
            print(
                f"  {op} {kind}: treadle {m * 1000:8.1f} ms   boto3 {b * 1000:8.1f} ms   "
                f"speed {b / m:.3f} (median of the rounds' ratios {paired:.3f})"
            )


if __name__ == "__main__":
    main()
