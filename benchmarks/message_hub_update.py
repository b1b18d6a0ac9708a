"""Cost of ``MessageHub.update_scalars`` per training step, against a plain dict assignment.

A training step hands the hub a dict of loss tensors. The hub keeps them unread (no device sync),
so what remains is Python bookkeeping; this measures it with 4 CPU tensors, and, as a baseline
in the same run, the cheapest possible bookkeeping: storing the dict's values in another dict.

    python benchmarks/message_hub_update.py [--steps 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import torch
from timing import per_call

from treadle.logging import MessageHub


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    weights = torch.ones(3, requires_grad=True)
    # Realistic losses: fresh 0-d tensors, two of them attached to an autograd graph.
    losses = {
        "loss": (weights * 2).sum(),
        "loss_cls": (weights * 3).sum(),
        "acc": torch.tensor(0.5),
        "grad_norm": torch.tensor(1.25),
    }
    hub = MessageHub("bench")
    store: dict[str, object] = {}

    def baseline() -> None:
        for key, value in losses.items():
            store[key] = value

    def update() -> None:
        hub.update_scalars(losses)

    base = per_call(baseline, args.steps, args.repeats)
    hub_time = per_call(update, args.steps, args.repeats)
    print(f"torch {torch.__version__}, {len(losses)} CPU tensors per call, {args.steps} calls")
    print(f"plain dict assignment      {base * 1e6:8.3f} us/call")
    print(f"MessageHub.update_scalars  {hub_time * 1e6:8.3f} us/call")
    print(f"ratio                      {hub_time / base:8.1f} x")
    # Reading converts the pending tensors of a buffer at once: the cost a logger hook pays once
    # per logging interval (50 steps here) for each key it reads.
    interval, reads, read_time = 50, 200, 0.0
    for _ in range(reads):
        for _ in range(interval):
            hub.update_scalars(losses)
        start = time.perf_counter()
        for key in losses:
            hub.get_scalar(key).mean(window_size=interval)
        read_time += time.perf_counter() - start
    print(f"reading {len(losses)} keys after {interval} steps  {read_time / reads * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
