"""Cost of ``LocalVisBackend.add_scalars`` per call, against MMEngine's way and a bare encode.

A logger hook hands the backend ~10 Python numbers per logging step. treadle checks them,
encodes one JSON line and keeps it in memory until the flush interval (2 s by default) or
close. The baselines, measured in the same run on the same directory:

- per-call append: what MMEngine's LocalVisBackend does on each call, written plainly here
  (open the file in append mode, ``json.dump`` the dict, write a newline, close);
- ``json.dumps`` of the same dict: the least any JSON-lines writer pays.

The target is at most 50 us per call. The total of each timed run includes the flushes that
happened during it; the final flush at close is timed separately.

    python benchmarks/visual_local_scalars.py [--steps 20000] [--repeats 5] [--dir /mnt/disk]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from timing import per_call

from treadle.visual.backends import LocalVisBackend

TARGET_US = 50.0


def scalars_of_a_logging_step() -> dict[str, float | int]:
    return {
        "lr": 0.00125,
        "base_lr": 0.00125,
        "momentum": 0.9,
        "data_time": 0.0123,
        "time": 0.4567,
        "loss": 1.2345678,
        "loss_cls": 0.8765432,
        "loss_bbox": 0.3580246,
        "grad_norm": 4.5678,
        "memory": 10240,
        "epoch": 3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where the files go (default: a temp dir)")
    args = parser.parse_args()

    scalars = scalars_of_a_logging_step()
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        step = 0

        def encode_only() -> None:
            json.dumps({**scalars, "step": step})

        plain_path = os.path.join(directory, "plain.json")

        def append_per_call() -> None:
            record = dict(scalars)
            record.setdefault("step", step)
            with open(plain_path, "a+") as file:
                json.dump(record, file)
                file.write("\n")

        backend = LocalVisBackend(os.path.join(directory, "vis_data"))

        def add_scalars() -> None:
            backend.add_scalars(scalars, step=step)

        add_scalars()  # first call: creates the directory, opens the file, loads treadle.dist
        encode = per_call(encode_only, args.steps, args.repeats)
        plain = per_call(append_per_call, args.steps, args.repeats)
        treadle = per_call(add_scalars, args.steps, args.repeats)
        start = time.perf_counter()
        backend.close()
        close = time.perf_counter() - start
        with open(os.path.join(directory, "vis_data", "scalars.json")) as file:
            lines = sum(1 for _ in file)

    print(f"{len(scalars)} scalars per call, {args.steps} calls, best of {args.repeats}")
    print(f"json.dumps only                      {encode * 1e6:8.2f} us/call")
    print(f"open-append-json.dump per call       {plain * 1e6:8.2f} us/call  (MMEngine's way)")
    print(f"LocalVisBackend.add_scalars          {treadle * 1e6:8.2f} us/call")
    print(f"ratio to the per-call append         {treadle / plain:8.2f} x")
    print(f"ratio to json.dumps only             {treadle / encode:8.2f} x")
    print(f"final flush at close                 {close * 1e3:8.2f} ms ({lines} lines in the file)")
    verdict = "within" if treadle * 1e6 <= TARGET_US else "OVER"
    print(f"target: at most {TARGET_US:.0f} us/call: {verdict}")


if __name__ == "__main__":
    main()
