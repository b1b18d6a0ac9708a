"""Local get/put of treadle.fileio against plain open().read() / open().write().

treadle's put is atomic (temporary file in the same directory, then a rename); this measures
what that costs next to a plain, non-atomic write of the same bytes, in the two cases users
have: writing a new file (a checkpoint per epoch) and replacing an existing one (latest.pth).

Every timed operation starts after ``os.sync()``, outside the timing: otherwise whichever runs
second pays for the writeback of the dirty pages the first one left, and the numbers measure
the order of the calls rather than the calls.

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


def plain_read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def plain_write(data: bytes, path: str) -> None:
    with open(path, "wb") as file:
        file.write(data)


def timed(function, *args) -> float:
    os.sync()
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def remove(*paths: str) -> None:
    for path in paths:
        if os.path.exists(path):
            os.remove(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--dir", default=None, help="directory to write in (default: a temp dir)")
    args = parser.parse_args()
    data = os.urandom(args.mib * 1024 * 1024)
    times: dict[str, list[float]] = {
        k: [] for k in ("write new", "put new", "write over", "put over", "read", "get")
    }
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        plain_path = os.path.join(directory, "plain.bin")
        treadle_path = os.path.join(directory, "treadle.bin")
        for round_index in range(args.rounds):
            # Alternate which goes first, so a slow spell of the machine hits both.
            pairs = [("write", plain_write, plain_path), ("put", fileio.put, treadle_path)]
            order = pairs if round_index % 2 == 0 else pairs[::-1]
            remove(plain_path, treadle_path)
            for name, write, path in order:
                times[f"{name} new"].append(timed(write, data, path))
            for name, write, path in order:
                times[f"{name} over"].append(timed(write, data, path))
            times["read"].append(timed(plain_read, plain_path))
            times["get"].append(timed(fileio.get, plain_path))  # the same file as read()
        assert fileio.get(treadle_path) == data
    print(f"{args.mib} MiB, median of {args.rounds} rounds")
    for baseline, ours, label in (
        ("write new", "put new", "put (new file)"),
        ("write over", "put over", "put (replace) "),
        ("read", "get", "get           "),
    ):
        base = statistics.median(times[baseline])
        mine = statistics.median(times[ours])
        plain = f"open().{baseline.split()[0]}()"
        print(
            f"  {label}: treadle {mine * 1000:8.1f} ms   {plain:<14} {base * 1000:8.1f} ms"
            f"   ratio {mine / base:.3f}"
        )


if __name__ == "__main__":
    main()
