"""What the dataset wrappers share: building their inner datasets from configs."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from treadle.logging import print_log
from treadle.runner.registry import DATASETS

from .base_dataset import BaseDataset
from .full_init import force_full_init


def build_inner_dataset(dataset: Any, wrapper: str, where: str = "dataset") -> BaseDataset:
    """``dataset`` built from DATASETS when it is a config (wrappers nest, as in MMEngine);
    otherwise a BaseDataset or a wrapper (anything with ``full_init`` and ``metainfo``)."""
    if isinstance(dataset, Mapping):
        return DATASETS.build(dataset)
    is_wrapper = hasattr(dataset, "full_init") and hasattr(dataset, "metainfo")
    if not (isinstance(dataset, BaseDataset) or is_wrapper):
        raise TypeError(
            f"{wrapper}: {where} must be a BaseDataset or a config dict of one, got "
            f"{type(dataset).__name__} (elements in datasets sequence should be config or "
            f"`BaseDataset` instance, but got {type(dataset)})"
        )
    return dataset


def warn_lazy_access(wrapper: object) -> None:
    print_log(
        f"{type(wrapper).__name__} is initialized on first access; call full_init() before "
        "building the DataLoader, so that each worker does not do it again",
        logger="current",
        level=logging.WARNING,
    )


def no_subset(wrapper: object) -> NotImplementedError:
    return NotImplementedError(
        f"{type(wrapper).__name__} does not support get_subset and get_subset_; take the "
        "subset of the datasets it wraps instead"
    )


class CopiedMetainfo:
    """The wrappers' ``metainfo``: a deep copy of what they keep in ``_metainfo``, so a caller
    that edits it changes nothing inside the dataset."""

    _metainfo: dict

    @property
    def metainfo(self) -> dict:
        return copy.deepcopy(self._metainfo)


class IndexMappedWrapper(CopiedMetainfo):
    """A wrapper whose item ``idx`` is item ``_get_ori_dataset_idx(idx)`` of ``self.dataset``
    (RepeatDataset, ClassBalancedDataset): the lookups that follow from that mapping."""

    dataset: Any
    _fully_initialized: bool

    def _get_ori_dataset_idx(self, idx: int) -> int:
        raise NotImplementedError

    def full_init(self) -> None:
        raise NotImplementedError

    @force_full_init
    def get_cat_ids(self, idx: int) -> list[int]:
        """The inner dataset's category ids of item ``idx`` (so that wrappers nest)."""
        return self.dataset.get_cat_ids(self._get_ori_dataset_idx(idx))

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        return self.dataset.get_data_info(self._get_ori_dataset_idx(idx))

    def __getitem__(self, idx: int) -> Any:
        if not self._fully_initialized:
            warn_lazy_access(self)
            self.full_init()
        return self.dataset[self._get_ori_dataset_idx(idx)]
