"""What the dataset wrappers share: building their inner datasets from configs."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from treadle.logging import print_log
from treadle.runner.registry import DATASETS

from .base_dataset import BaseDataset


def build_inner_dataset(dataset: Any, wrapper: str, where: str = "dataset") -> BaseDataset:
    """``dataset`` built from DATASETS when it is a config (wrappers nest, as in MMEngine);
    otherwise a BaseDataset or a wrapper (anything with ``full_init`` and ``metainfo``)."""
    if isinstance(dataset, Mapping):
        return DATASETS.build(dataset)
    is_wrapper = hasattr(dataset, "full_init") and hasattr(dataset, "metainfo")
    if not (isinstance(dataset, BaseDataset) or is_wrapper):
        raise TypeError(
            f"{wrapper}: {where} must be a BaseDataset or a config dict of one, got "
            f"{type(dataset).__name__}"
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
