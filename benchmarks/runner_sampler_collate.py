"""Cost of treadle's sampler and collate functions against plain PyTorch, in the same run.

- one full epoch of ``DefaultSampler`` (shuffled, resumable) against torch's ``RandomSampler``;
- ``pseudo_collate`` and treadle's ``default_collate`` against torch's ``default_collate`` on a
  batch of dicts (an image tensor, an int label, a string id).

    python benchmarks/runner_sampler_collate.py [--length 200000] [--batch 32] [--repeats 7]
"""

from __future__ import annotations

import argparse

import torch
from timing import per_call
from torch.utils.data import RandomSampler
from torch.utils.data import default_collate as torch_default_collate

from treadle.runner.dataset import DefaultSampler, default_collate, pseudo_collate


def report(label: str, seconds: float, baseline: float) -> None:
    print(f"{label:<44} {seconds * 1e3:9.3f} ms   ratio {seconds / baseline:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    dataset = range(args.length)
    generator = torch.Generator()
    generator.manual_seed(0)
    random_sampler = RandomSampler(dataset, generator=generator)
    default_sampler = DefaultSampler(dataset, seed=0)

    def torch_epoch() -> None:
        for _ in random_sampler:
            pass

    def treadle_epoch() -> None:
        default_sampler.set_epoch(default_sampler.epoch + 1)
        for _ in default_sampler:
            pass

    print(f"one epoch of {args.length} indices, best of {args.repeats}")
    baseline = per_call(torch_epoch, 1, args.repeats)
    report("torch RandomSampler", baseline, baseline)
    report("treadle DefaultSampler", per_call(treadle_epoch, 1, args.repeats), baseline)

    samples = [
        {"img": torch.rand(3, 64, 64), "label": i, "id": f"img{i}"} for i in range(args.batch)
    ]
    steps = 200
    print(f"\ncollate a batch of {args.batch} dicts, {steps} calls, best of {args.repeats}")
    baseline = per_call(lambda: torch_default_collate(samples), steps, args.repeats)
    report("torch default_collate", baseline, baseline)
    report(
        "treadle default_collate",
        per_call(lambda: default_collate(samples), steps, args.repeats),
        baseline,
    )
    report(
        "treadle pseudo_collate",
        per_call(lambda: pseudo_collate(samples), steps, args.repeats),
        baseline,
    )


if __name__ == "__main__":
    main()
