"""``ClassBalancedDataset``: repeat the items of rare categories (LVIS's repeat factor
sampling, https://arxiv.org/abs/1908.03195)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from treadle.runner.registry import DATASETS

from .base_dataset import BaseDataset
from .full_init import force_full_init
from .indices import checked_index
from .wrapped import IndexMappedWrapper, build_inner_dataset, no_subset


@DATASETS.register_module()
class ClassBalancedDataset(IndexMappedWrapper):
    """Each item appears ``ceil(r)`` times, where ``r`` is the largest repeat factor of its
    categories and a category seen in a fraction ``f`` of the items has the factor
    ``max(1, sqrt(oversample_thr / f))``. The inner dataset must implement ``get_cat_ids``.

    Example:
        >>> balanced = ClassBalancedDataset(dict(type='MyDetDataset', ann_file='ann.json'),
        ...                                 oversample_thr=0.1)
        >>> len(balanced) >= len(balanced.dataset)
        True
    """

    def __init__(
        self, dataset: BaseDataset | dict, oversample_thr: float, lazy_init: bool = False
    ) -> None:
        self.dataset = build_inner_dataset(dataset, "ClassBalancedDataset")
        self.oversample_thr = oversample_thr
        self._metainfo = self.dataset.metainfo
        self._fully_initialized = False
        if not lazy_init:
            self.full_init()

    def full_init(self) -> None:
        if self._fully_initialized:
            return
        self.dataset.full_init()
        repeat_factors = self._get_repeat_factors(self.dataset, self.oversample_thr)
        self.repeat_indices = [
            index for index, factor in enumerate(repeat_factors) for _ in range(math.ceil(factor))
        ]
        self._fully_initialized = True

    def _get_repeat_factors(self, dataset: BaseDataset, repeat_thr: float) -> list[float]:
        """The repeat factor of every item of ``dataset``."""
        cat_ids = [set(dataset.get_cat_ids(index)) for index in range(len(dataset))]
        images_per_category = Counter(cat for cats in cat_ids for cat in cats)
        category_repeat = {
            cat: max(1.0, math.sqrt(repeat_thr / (count / len(dataset))))
            for cat, count in images_per_category.items()
        }
        return [max((category_repeat[cat] for cat in cats), default=1.0) for cats in cat_ids]

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> int:
        return self.repeat_indices[checked_index(idx, len(self.repeat_indices), self)]

    @force_full_init
    def __len__(self) -> int:
        return len(self.repeat_indices)

    def get_subset_(self, indices: Any) -> None:
        raise no_subset(self)

    def get_subset(self, indices: Any) -> ClassBalancedDataset:
        raise no_subset(self)
