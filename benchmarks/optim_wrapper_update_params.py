"""Cost of ``OptimWrapper.update_params(loss)`` against the plain PyTorch step, in the same run.

A training step of the MLP of benchmarks/mlp.py (forward, cross-entropy, then the update):

- plain:   ``loss.backward(); optimizer.step(); optimizer.zero_grad()``
- treadle: ``optim_wrapper.update_params(loss)``

and the same with gradient clipping by norm (plain: ``clip_grad_norm_`` before the step; treadle
also records the norm in the message hub) and with 4-step accumulation (plain: divide the loss,
step every 4th call). The two sides alternate in blocks of 4 calls and the median block of
each is reported, so a busy machine slows both alike. Last, the wrapper's own cost per call, on
a 1-parameter model where backward and step cost almost nothing.

    python benchmarks/optim_wrapper_update_params.py [--steps 200] [--repeats 10] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from mlp import make_batch, make_mlp, mlp_loss
from torch import nn

from treadle.logging import MessageHub
from treadle.runner.optim import OptimWrapper

# Calls per timed block: one whole cycle of the 4-step accumulation.
BLOCK = 4


def alternate(
    baseline: Callable[[], object], candidate: Callable[[], object], steps: int, repeats: int
) -> tuple[float, float]:
    """Median time per call of each, over blocks of ``BLOCK`` calls (a whole accumulation
    cycle) that alternate between the two sides, the side going first changing every round:
    load from other processes falls on both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    functions = (baseline, candidate)
    clock = time.perf_counter
    for round_index in range(steps * repeats // BLOCK):
        for index in (0, 1) if round_index % 2 == 0 else (1, 0):
            function = functions[index]
            start = clock()
            for _ in range(BLOCK):
                function()
            times[index].append((clock() - start) / BLOCK)
    return statistics.median(times[0]), statistics.median(times[1])


def report(label: str, plain: float, treadle: float) -> None:
    print(
        f"{label:<34} plain {plain * 1e6:9.1f} us   treadle {treadle * 1e6:9.1f} us   "
        f"ratio {treadle / plain:6.3f}"
    )


def sgd(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def compare(label: str, wrapper_kwargs: dict, steps: int, repeats: int) -> None:
    batch = make_batch()
    plain_model, treadle_model = make_mlp(), make_mlp()
    optimizer = sgd(plain_model)
    wrapper = OptimWrapper(sgd(treadle_model), **wrapper_kwargs)
    accumulate = wrapper_kwargs.get("accumulative_counts", 1)
    max_norm = wrapper_kwargs.get("clip_grad", {}).get("max_norm")
    calls = [0]

    def plain_step() -> None:
        loss = mlp_loss(plain_model, batch)
        if accumulate > 1:
            loss = loss / accumulate
        loss.backward()
        calls[0] += 1
        if calls[0] % accumulate == 0:
            if max_norm is not None:
                nn.utils.clip_grad_norm_(plain_model.parameters(), max_norm)
            optimizer.step()
            optimizer.zero_grad()

    def treadle_step() -> None:
        wrapper.update_params(mlp_loss(treadle_model, batch))

    report(label, *alternate(plain_step, treadle_step, steps, repeats))


def overhead(steps: int, repeats: int) -> None:
    """The wrapper's fixed cost: a model whose backward and step are nearly free."""
    weight = nn.Parameter(torch.ones(1))
    optimizer = torch.optim.SGD([weight], lr=0.0)
    wrapper = OptimWrapper(torch.optim.SGD([weight], lr=0.0))

    def plain_step() -> None:
        (weight * 2).sum().backward()
        optimizer.step()
        optimizer.zero_grad()

    def treadle_step() -> None:
        wrapper.update_params((weight * 2).sum())

    plain, treadle = alternate(plain_step, treadle_step, steps, repeats)
    report("1-parameter model", plain, treadle)
    print(f"{'wrapper cost per update_params':<34} {(treadle - plain) * 1e6:+.2f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    MessageHub.get_instance("bench")

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), MLP 256-512x3-10, "
        f"batch 64, SGD; {args.steps * args.repeats} calls each in alternating blocks of "
        f"{BLOCK}, median block"
    )
    compare("update_params", {}, args.steps, args.repeats)
    compare(
        "update_params, clip_grad norm", {"clip_grad": {"max_norm": 1.0}}, args.steps, args.repeats
    )
    compare("update_params, accumulate 4", {"accumulative_counts": 4}, args.steps, args.repeats)
    overhead(args.steps * 20, args.repeats)


if __name__ == "__main__":
    main()
