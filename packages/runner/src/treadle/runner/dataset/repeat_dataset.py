"""``RepeatDataset``: a dataset repeated ``times`` times, to shorten data loading between
epochs when the dataset is small."""

from __future__ import annotations

from typing import Any

from treadle.runner.registry import DATASETS

from .base_dataset import BaseDataset
from .full_init import force_full_init
from .indices import checked_index
from .wrapped import IndexMappedWrapper, build_inner_dataset, no_subset


@DATASETS.register_module()
class RepeatDataset(IndexMappedWrapper):
    """Item ``i`` is the inner dataset's item ``i % len(dataset)``; the length is
    ``times * len(dataset)``.

    Example:
        >>> repeated = RepeatDataset(dict(type='MyDataset', ann_file='ann.json'), times=3)
        >>> len(repeated) == 3 * len(repeated.dataset)
        True
    """

    def __init__(self, dataset: BaseDataset | dict, times: int, lazy_init: bool = False) -> None:
        self.dataset = build_inner_dataset(dataset, "RepeatDataset")
        self.times = times
        self._metainfo = self.dataset.metainfo
        self._fully_initialized = False
        if not lazy_init:
            self.full_init()

    def full_init(self) -> None:
        if self._fully_initialized:
            return
        self.dataset.full_init()
        self._ori_len = len(self.dataset)
        self._fully_initialized = True

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> int:
        return checked_index(idx, len(self), self) % self._ori_len

    @force_full_init
    def __len__(self) -> int:
        return self.times * self._ori_len

    def get_subset_(self, indices: Any) -> None:
        raise no_subset(self)

    def get_subset(self, indices: Any) -> RepeatDataset:
        raise no_subset(self)
