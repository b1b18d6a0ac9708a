"""Local get/put of treadle.fileio against plain open().read() / open().write().

treadle's put is atomic (temporary file in the same directory, then a rename); this measures
what that costs next to a plain, non-atomic write of the same bytes.

    python benchmarks/fileio_local.py                 # 256 MiB, 11 rounds
    python benchmarks/fileio_local.py --mib 64 --rounds 5 --dir /mnt/disk
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import treadle.fileio as fileio


def timed(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def plain_read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def plain_write(data: bytes, path: str) -> None:
    with open(path, "wb") as file:
        file.write(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--dir", default=None, help="directory to write in (default: a temp dir)")
    args = parser.parse_args()
    data = os.urandom(args.mib * 1024 * 1024)
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        plain_path = os.path.join(directory, "plain.bin")
        treadle_path = os.path.join(directory, "treadle.bin")
        plain_write(data, plain_path)
        fileio.put(data, treadle_path)
        times: dict[str, list[float]] = {k: [] for k in ("write", "put", "read", "get")}
        # Alternate the two in every round, so a slow spell of the machine hits both.
        for _ in range(args.rounds):
            times["write"].append(timed(plain_write, data, plain_path))
            times["put"].append(timed(fileio.put, data, treadle_path))
            times["read"].append(timed(plain_read, plain_path))
            times["get"].append(timed(fileio.get, plain_path))  # the same file as read()
        assert fileio.get(treadle_path) == data
    print(f"{args.mib} MiB, median of {args.rounds} rounds")
    for baseline, ours, label in (("write", "put", "put"), ("read", "get", "get")):
        base = statistics.median(times[baseline])
        mine = statistics.median(times[ours])
        print(
            f"  {label}: treadle {mine * 1000:8.1f} ms   open().{baseline}() {base * 1000:8.1f} ms"
            f"   ratio {mine / base:.3f}"
        )


if __name__ == "__main__":
    main()
