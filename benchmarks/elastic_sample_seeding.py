"""What elastic's per-sample randomness costs a sample: ``seeded_item`` (seed Python's ``random``,
NumPy's global generator and torch's CPU generator from the sample's key, read, put the three
back) against reading the sample directly, and a whole train loader with ``elastic`` against
the same loader without it (one process, ``num_workers=0``, a dataset that returns a stored
tensor: the engine's cost is all there is), timed with this thread's CPU clock.

    python benchmarks/elastic_sample_seeding.py [--samples 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch


class Stored(torch.utils.data.Dataset):
    def __init__(self, length: int) -> None:
        self.items = torch.randn(length, 8)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> torch.Tensor:
        return self.items[index]


def per_sample(samples: int, repeats: int) -> tuple[float, float]:
    from treadle.runner.dataset.sample_seeding import SampleKey, seeded_item, stream_seed

    dataset = Stored(1000)
    stream = stream_seed(0, 1)
    keys = [SampleKey(stream, i % 1000) for i in range(samples)]
    plain, seeded = [], []
    for _ in range(repeats):
        start = time.thread_time()
        for key in keys:
            dataset[key.sample]
        plain.append((time.thread_time() - start) / samples)
        start = time.thread_time()
        for key in keys:
            seeded_item(dataset, key)
        seeded.append((time.thread_time() - start) / samples)
    return statistics.median(plain), statistics.median(seeded)


def loader_epoch(samples: int, repeats: int) -> tuple[float, float]:
    from treadle.runner.dataset.elastic_plan import elastic_plan
    from treadle.runner.registry import DATASETS
    from treadle.runner.runner.dataloader import build_dataloader

    DATASETS.register_module(name="StoredBench", module=Stored, force=True)
    cfg = dict(
        dataset=dict(type="StoredBench", length=samples),
        sampler=dict(type="DefaultSampler", shuffle=True),
        batch_size=64,
        collate_fn=dict(type="default_collate"),
    )
    plain = build_dataloader(cfg, seed=0)
    elastic = build_dataloader(cfg, seed=0, elastic=elastic_plan(dict(global_batch_size=64), 1))
    times: dict[str, list[float]] = {"plain": [], "elastic": []}
    for _ in range(repeats):
        for name, loader in (("plain", plain), ("elastic", elastic)):
            start = time.thread_time()
            for _batch in loader:
                pass
            times[name].append((time.thread_time() - start) / samples)
    return statistics.median(times["plain"]), statistics.median(times["elastic"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    plain, seeded = per_sample(args.samples, args.repeats)
    print(f"per-sample randomness, median of {args.repeats} passes over {args.samples} samples")
    print(f"  dataset[i]:               {plain * 1e6:7.2f} us a sample")
    print(
        f"  seeded_item(dataset, key): {seeded * 1e6:7.2f} us a sample "
        f"(+{(seeded - plain) * 1e6:.2f} us)"
    )
    plain, elastic = loader_epoch(args.samples, args.repeats)
    print(
        f"  a train loader's epoch, batch 64: {plain * 1e6:.2f} us a sample without elastic, "
        f"{elastic * 1e6:.2f} us with it (+{(elastic - plain) * 1e6:.2f} us)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
