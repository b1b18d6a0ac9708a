"""Memory of forked DataLoader workers reading a big data list: serialized or not.

A worker that reads a Python list of dicts touches each dict's reference count, which copies
the page it lives on (copy-on-read); after an epoch every worker holds its own copy of the
list. ``BaseDataset(serialize_data=True)`` holds the list as one NumPy byte buffer, whose
pages the workers only read. This builds a generated annotation list, iterates it fully with
a DataLoader of forked workers, once through a serialized BaseDataset and once through a plain
list-backed torch Dataset, and reports the workers' memory (psutil): USS, the memory only that
worker holds (what copy-on-read grows), and PSS, its share of everything it maps.

    python benchmarks/dataset_worker_memory.py [--items 200000] [--workers 4]
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import tempfile

import psutil
from torch.utils.data import DataLoader, Dataset

from treadle import fileio
from treadle.runner.dataset import BaseDataset

MIB = 1024 * 1024


def make_items(count: int) -> list[dict]:
    return [
        {
            "img_path": f"images/train/{index:08d}.jpg",
            "height": 480 + index % 7,
            "width": 640,
            "instances": [
                {"bbox": [1.5 * k, 2.5 * k, 30.0 + k, 40.0 + k], "bbox_label": (index + k) % 80}
                for k in range(3)
            ],
        }
        for index in range(count)
    ]


class ListDataset(Dataset):
    """The plain way: the data list as a Python list of dicts; an item is handed out as a copy,
    as a pipeline that changes it needs (BaseDataset(serialize_data=False) does the same)."""

    def __init__(self, items: list[dict]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict:
        return copy.deepcopy(self.items[index])


def count_batch(batch: list) -> int:
    return len(batch)


def workers_memory(dataset: Dataset | range, workers: int) -> tuple[float, float, int]:
    """(summed USS, summed PSS) of the workers in MiB, after one full epoch, and samples read."""
    loader = DataLoader(
        dataset,
        batch_size=256,
        num_workers=workers,
        collate_fn=count_batch,
        persistent_workers=True,
        multiprocessing_context="fork",
    )
    iterator = iter(loader)
    seen = sum(iterator)  # the workers stay alive (persistent) until the iterator goes
    children = psutil.Process().children()
    infos = [child.memory_full_info() for child in children]
    del iterator, loader
    gc.collect()
    return sum(i.uss for i in infos) / MIB, sum(i.pss for i in infos) / MIB, seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    results = {}
    # Each case builds its dataset, measures, and drops it before the next one.
    results["no data list (range): the workers' floor"] = workers_memory(
        range(args.items), args.workers
    )
    results["plain list of dicts (torch Dataset)"] = workers_memory(
        ListDataset(make_items(args.items)), args.workers
    )
    gc.collect()
    with tempfile.TemporaryDirectory() as folder:
        ann_file = os.path.join(folder, "ann.pkl")
        content = {"metainfo": {"classes": list(range(80))}, "data_list": make_items(args.items)}
        fileio.dump(content, ann_file)
        del content
        for serialize in (False, True):
            gc.collect()
            dataset = BaseDataset(ann_file, data_prefix={}, serialize_data=serialize)
            if serialize:
                buffer_mib = dataset.data_bytes.nbytes / MIB
            label = f"BaseDataset(serialize_data={serialize})"
            results[label] = workers_memory(dataset, args.workers)
            del dataset

    assert all(seen == args.items for _, _, seen in results.values())
    print(f"{args.items} items, {args.workers} forked workers, memory after one full epoch")
    print(f"serialized buffer: {buffer_mib:.1f} MiB")
    print(f"{'dataset':<42} {'USS (sum)':>12} {'PSS (sum)':>12}")
    for label, (uss, pss, _) in results.items():
        print(f"{label:<42} {uss:8.1f} MiB {pss:8.1f} MiB")
    plain_uss = results["plain list of dicts (torch Dataset)"][0]
    serialized_uss = results["BaseDataset(serialize_data=True)"][0]
    print(f"USS ratio, serialized / plain list: {serialized_uss / plain_uss:.2f}")


if __name__ == "__main__":
    main()
