"""The digits data of the example, with nothing of treadle in it, so that the start-up
benchmark can serve MMEngine the very same data set (benchmarks/mmengine_digits.py).

scikit-learn's digits (1,797 grey 8x8 images of the digits 0 to 9) ship inside scikit-learn:
nothing is downloaded.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from typing import Any

import numpy as np
import torch


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits as ``(images (1797, 64) float, labels (1797,) int)``.

    The CSV file scikit-learn ships is read directly: importing sklearn.datasets (with scipy)
    would add a second to the start of every run. ``sklearn.datasets.load_digits`` is the
    fallback should the file move.
    """
    spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "the digits example needs scikit-learn for its bundled data set: "
            "pip install scikit-learn"
        )
    path = os.path.join(os.path.dirname(spec.origin), "datasets", "data", "digits.csv.gz")
    if not os.path.isfile(path):
        from sklearn.datasets import load_digits as sklearn_load_digits

        return sklearn_load_digits(return_X_y=True)
    with gzip.open(path, "rt") as file:
        table = np.loadtxt(file, delimiter=",")
    return table[:, :-1], table[:, -1].astype(np.int64)


class Digits(torch.utils.data.Dataset):
    """scikit-learn's digits, shuffled once with ``seed`` and cut into train and val parts.

    Each sample is ``dict(inputs=float32 tensor of 64 pixels in [0, 1], labels=int)``.

    Example:
        >>> len(Digits('train')), len(Digits('val'))
        (1438, 359)
    """

    def __init__(self, split: str = "train", val_fraction: float = 0.2, seed: int = 0) -> None:
        if split not in ("train", "val"):
            raise ValueError(f"Digits: split must be 'train' or 'val', got {split!r}")
        images, labels = load_digits()
        order = np.random.default_rng(seed).permutation(len(labels))
        n_val = round(len(labels) * val_fraction)
        chosen = order[n_val:] if split == "train" else order[:n_val]
        self.inputs = torch.from_numpy(images[chosen] / 16.0).float()  # pixels are 0..16
        self.labels = torch.from_numpy(labels[chosen]).long()
        self.metainfo = {"classes": tuple(str(d) for d in range(10))}

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.inputs[index], "labels": self.labels[index]}
