"""Cost of treadle.dist's coalesced reductions in a real 2-process gloo group, against plain
``torch.distributed`` calls in the same run.

- ``all_reduce_dict`` of 100 scalars (one collective) against 100 ``all_reduce`` calls, the way
  a dict of metrics is reduced key by key;
- ``all_reduce_params`` (one collective per dtype) against one ``all_reduce`` per tensor, for
  100 small BatchNorm-like buffers (latency-bound) and a small network's 30 parameters
  (2.3 M floats: bandwidth-bound, where packing costs a copy and gains little).

    python benchmarks/dist_collectives.py [--calls 50] [--repeats 3]

The script starts the group itself: it runs itself again as 2 processes on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from collections.abc import Callable

import timing

WORLD_SIZE = 2


def per_call(function: Callable[[], object], calls: int, repeats: int) -> float:
    """timing.per_call, with the ranks starting each repeat together."""
    import treadle.dist as dist

    return timing.per_call(function, calls, repeats, before_repeat=dist.barrier)


def worker(calls: int, repeats: int) -> None:
    import torch
    import torch.distributed as torch_dist

    import treadle.dist as dist

    dist.init_dist("pytorch", backend="gloo")
    rank = dist.get_rank()
    metrics = {f"metric_{i:03d}": torch.tensor(float(rank + i)) for i in range(100)}

    # A small convolutional network's shapes (weights, biases, norm parameters), and the
    # BatchNorm statistics of a deeper one (many small buffers: latency-bound).
    shapes = [(64, 3, 7, 7), (64,), (64,)]
    for channels in (64, 128, 256):
        shapes += [(channels, channels, 3, 3), (channels,), (channels,)] * 3
    params = [torch.randn(shape) for shape in shapes]
    buffers = [torch.randn(channels) for channels in (64, 128, 256, 512) for _ in range(25)]
    rows = [
        (
            "all_reduce_dict, 100 scalars",
            list(metrics.values()),
            lambda: dist.all_reduce_dict(metrics),
        ),
        ("all_reduce_params, BatchNorm buffers", buffers, lambda: dist.all_reduce_params(buffers)),
        ("all_reduce_params, conv parameters", params, lambda: dist.all_reduce_params(params)),
    ]

    lines = [f"torch {torch.__version__}, gloo, {WORLD_SIZE} processes on 127.0.0.1"]
    for title, tensors, treadle_call in rows:
        megabytes = sum(tensor.numel() * tensor.element_size() for tensor in tensors) / 2**20

        def plain(tensors: list = tensors) -> None:
            for tensor in tensors:
                torch_dist.all_reduce(tensor)

        base = per_call(plain, calls, repeats)
        ours = per_call(treadle_call, calls, repeats)
        lines.append(f"{title} ({megabytes:.2f} MB)")
        lines.append(
            f"  torch.distributed, {len(tensors):3d} x all_reduce  {base * 1e6:10.1f} us/call"
        )
        lines.append(f"  treadle.dist, coalesced          {ours * 1e6:10.1f} us/call")
        lines.append(f"  speed-up                         {base / ours:10.1f} x")
    if rank == 0:
        print("\n".join(lines), flush=True)
    torch_dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="calls per timing")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.calls, args.repeats)
        return 0

    port = str(free_port())
    command = [sys.executable, __file__, "--worker", f"--calls={args.calls}"]
    command.append(f"--repeats={args.repeats}")
    processes = []
    for rank in range(WORLD_SIZE):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        env.update(RANK=str(rank), WORLD_SIZE=str(WORLD_SIZE), LOCAL_RANK=str(rank))
        processes.append(subprocess.Popen(command, env=env))
    return max(process.wait() for process in processes)


if __name__ == "__main__":
    sys.exit(main())
