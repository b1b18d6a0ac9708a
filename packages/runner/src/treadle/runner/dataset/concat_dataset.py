"""``ConcatDataset``: several datasets with the same meta information, one after another."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

import numpy as np
from torch.utils.data.dataset import ConcatDataset as _TorchConcatDataset

from treadle.runner.registry import DATASETS

from .base_dataset import BaseDataset
from .full_init import force_full_init
from .indices import checked_index
from .wrapped import CopiedMetainfo, build_inner_dataset, no_subset, warn_lazy_access


def _same_value(first: Any, other: Any) -> bool:
    if isinstance(first, np.ndarray):
        return bool(np.array_equal(first, other))
    return bool(first == other)


@DATASETS.register_module()
class ConcatDataset(CopiedMetainfo, _TorchConcatDataset):
    """The items of ``datasets`` end to end. Their meta information must agree, except the
    keys listed in ``ignore_keys``; the first dataset's is the concatenation's.

    Example:
        >>> both = ConcatDataset([cats_train, cats_extra])  # configs work too
        >>> len(both) == len(cats_train) + len(cats_extra)
        True
    """

    def __init__(
        self,
        datasets: Sequence[BaseDataset | dict],
        lazy_init: bool = False,
        ignore_keys: str | list[str] | None = None,
    ) -> None:
        self.datasets: list[BaseDataset] = [
            build_inner_dataset(dataset, "ConcatDataset", f"datasets[{i}]")
            for i, dataset in enumerate(datasets)
        ]
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset, got none")
        if ignore_keys is None:
            self.ignore_keys: list[str] = []
        elif isinstance(ignore_keys, str):
            self.ignore_keys = [ignore_keys]
        elif isinstance(ignore_keys, list):
            self.ignore_keys = ignore_keys
        else:
            raise TypeError(
                f"ignore_keys must be a str or a list of str, got {type(ignore_keys).__name__} "
                f"(ignore_keys should be a list or str, but got {type(ignore_keys)})"
            )
        self._metainfo = self.datasets[0].metainfo
        self._check_metainfo()
        self._fully_initialized = False
        if not lazy_init:
            self.full_init()

    def _check_metainfo(self) -> None:
        metainfos = [dataset.metainfo for dataset in self.datasets]
        keys = set().union(*metainfos) - set(self.ignore_keys)
        first = metainfos[0]
        for number, metainfo in enumerate(metainfos, 1):
            for key in sorted(keys, key=str):
                if key not in metainfo:
                    raise ValueError(
                        f"ConcatDataset: the meta information of dataset {number} has no "
                        f"{key!r} key, which another dataset has (list it in ignore_keys to "
                        f"allow it): {key} does not in the meta information of the "
                        f"{number}-th dataset"
                    )
                if type(metainfo[key]) is not type(first[key]):
                    raise TypeError(
                        f"ConcatDataset: {key!r} is a {type(metainfo[key]).__name__} in "
                        f"dataset {number} but a {type(first[key]).__name__} in dataset 1: "
                        f"the type should be the same with the first dataset"
                    )
                if not _same_value(first[key], metainfo[key]):
                    raise ValueError(
                        f"ConcatDataset: the meta information {key!r} of dataset {number} "
                        f"({metainfo[key]!r}) differs from dataset 1's ({first[key]!r}); "
                        "list the key in ignore_keys if that is intended (the meta "
                        f"information of the {number}-th dataset does not match meta "
                        "information of the first dataset)"
                    )

    def full_init(self) -> None:
        if self._fully_initialized:
            return
        for dataset in self.datasets:
            dataset.full_init()
        self.cumulative_sizes = self.cumsum(self.datasets)
        self._fully_initialized = True

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> tuple[int, int]:
        """``(dataset_idx, sample_idx)``: which inner dataset holds item ``idx``, and where."""
        idx = checked_index(idx, self.cumulative_sizes[-1], self, negative_phrase=True)
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx - self.cumulative_sizes[dataset_idx - 1] if dataset_idx else idx
        return dataset_idx, sample_idx

    @force_full_init
    def get_cat_ids(self, idx: int) -> list[int]:
        """The category ids of item ``idx``, from the dataset that holds it."""
        dataset_idx, sample_idx = self._get_ori_dataset_idx(idx)
        return self.datasets[dataset_idx].get_cat_ids(sample_idx)

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        dataset_idx, sample_idx = self._get_ori_dataset_idx(idx)
        return self.datasets[dataset_idx].get_data_info(sample_idx)

    @force_full_init
    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if not self._fully_initialized:
            warn_lazy_access(self)
            self.full_init()
        dataset_idx, sample_idx = self._get_ori_dataset_idx(idx)
        return self.datasets[dataset_idx][sample_idx]

    def get_subset_(self, indices: Any) -> None:
        raise no_subset(self)

    def get_subset(self, indices: Any) -> ConcatDataset:
        raise no_subset(self)
