"""``BaseDataset``: the dataset every task dataset derives from (MMEngine's format).

It reads an annotation file, keeps its ``metainfo`` and ``data_list``, filters and subsets
the list, and holds it serialized in one buffer (see ``serialization``) so that DataLoader
workers share it. A sample is ``pipeline(get_data_info(i))``. The submodule also exports
``Compose`` and ``force_full_init``, as ``mmengine.dataset.base_dataset`` does.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from torch.utils.data import Dataset

from treadle.fileio import join_path
from treadle.logging import print_log
from treadle.runner.utils import is_abs

from .annotation_file import load_annotation_file
from .compose import Compose
from .full_init import force_full_init
from .indices import checked_index, subset_positions
from .metainfo import merge_metainfo
from .serialization import item_at, serialize_items, serialized_subset

__all__ = ["BaseDataset", "Compose", "force_full_init"]

# What a copy without annotations leaves out: the data list in either of its forms.
_DATA_ATTRIBUTES = ("data_list", "data_bytes", "data_address")


class BaseDataset(Dataset):
    """A dataset of dicts read from an annotation file ``{'metainfo': {...}, 'data_list':
    [...]}``; subclasses override ``parse_data_info`` (or ``load_data_list``), ``filter_data``
    and ``get_cat_ids`` for their task.

    Args:
        ann_file: the annotation file, relative to ``data_root`` unless absolute; any
            treadle.fileio backend.
        metainfo: updates the class's ``METAINFO`` (the file's metainfo fills only what is
            missing from both).
        data_root: the root of ``ann_file`` and of the ``data_prefix`` folders.
        data_prefix: ``{key: folder}``; each item's ``key`` is joined to its folder.
        filter_cfg: how ``filter_data`` filters (subclasses read it).
        indices: keep the first N items (an int) or these items (a sequence).
        serialize_data: hold the data list as one byte buffer (shared by workers).
        pipeline: transforms (callables or TRANSFORMS configs) applied to each item.
        test_mode: a pipeline returning None is an error instead of drawing another item.
        lazy_init: leave the data list unloaded until ``full_init()`` (or first use).
        max_refetch: how many other items are drawn, in training, when the pipeline
            returns None, before giving up.

    Example:
        >>> from treadle import fileio
        >>> fileio.dump({'metainfo': {'classes': ['cat', 'dog']},
        ...              'data_list': [{'img_path': 'a.png', 'label': 1}]}, 'memory://ann.json')
        >>> dataset = BaseDataset(
        ...     'ann.json', data_root='memory://', data_prefix={'img_path': 'img'})
        >>> dataset[0]
        {'img_path': 'memory://img/a.png', 'label': 1, 'sample_idx': 0}
        >>> dataset.metainfo
        {'classes': ['cat', 'dog']}
    """

    METAINFO: ClassVar[dict] = dict()
    _fully_initialized: bool = False

    def __init__(
        self,
        ann_file: str | None = "",
        metainfo: Mapping | None = None,
        data_root: str | None = "",
        data_prefix: dict = dict(img_path=""),  # noqa: B006 (MMEngine's default; copied below)
        filter_cfg: dict | None = None,
        indices: int | Sequence[int] | None = None,
        serialize_data: bool = True,
        pipeline: Sequence[dict | Callable] = [],  # never mutated
        test_mode: bool = False,
        lazy_init: bool = False,
        max_refetch: int = 1000,
    ) -> None:
        self.ann_file = ann_file
        self._metainfo = self._load_metainfo(metainfo)
        self.data_root = data_root
        self.data_prefix = copy.copy(data_prefix)
        self.filter_cfg = copy.deepcopy(filter_cfg)
        self._indices = indices
        self.serialize_data = serialize_data
        self.test_mode = test_mode
        self.max_refetch = max_refetch
        self.data_list: list[dict] = []
        self.data_bytes: np.ndarray
        self.data_address: np.ndarray
        self._join_prefix()
        self.pipeline = Compose(pipeline)
        if not lazy_init:
            self.full_init()

    @classmethod
    def _load_metainfo(cls, metainfo: Mapping | None = None) -> dict:
        return merge_metainfo(cls.METAINFO, metainfo)

    @property
    def metainfo(self) -> dict:
        """A deep copy of the meta information (changing it leaves the dataset alone)."""
        return copy.deepcopy(self._metainfo)

    def _join_prefix(self) -> None:
        """Put ``data_root`` in front of ``ann_file`` and of every ``data_prefix`` folder that
        is relative (a URI such as 's3://...' is absolute)."""
        if self.ann_file and self.data_root and not is_abs(self.ann_file):
            self.ann_file = join_path(self.data_root, self.ann_file)
        for key, prefix in self.data_prefix.items():
            if not isinstance(prefix, str):
                raise TypeError(
                    f"data_prefix[{key!r}] must be a str, got {type(prefix).__name__}: {prefix!r} "
                    f"(prefix should be a string, but got {type(prefix)})"
                )
            if self.data_root and not is_abs(prefix):
                self.data_prefix[key] = join_path(self.data_root, prefix)

    def full_init(self) -> None:
        """Load, filter, subset and serialize the data list; does nothing the second time."""
        if self._fully_initialized:
            return
        self.data_list = self.load_data_list()
        self.data_list = self.filter_data()
        if self._indices is not None:
            self.data_list = self._get_unserialized_subset(self._indices)
        if self.serialize_data:
            self.data_bytes, self.data_address = self._serialize_data()
        self._fully_initialized = True

    # full_init's steps under MMEngine's private names: task datasets that override full_init
    # (mmdetection's BaseDetDataset) call them.
    def _serialize_data(self) -> tuple[np.ndarray, np.ndarray]:
        """``(data_bytes, data_address)`` of the data list, which is emptied: the dicts are in
        the buffer now, and workers should see no Python objects."""
        serialized = serialize_items(self.data_list)
        self.data_list.clear()
        return serialized

    def _get_unserialized_subset(self, indices: int | Sequence[int]) -> list[dict]:
        """The items of the (unserialized) data list that ``indices`` keeps, in its order."""
        positions = subset_positions(indices, len(self.data_list), self)
        return [self.data_list[position] for position in positions]

    def _get_serialized_subset(self, indices: int | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The buffer and addresses of the serialized items that ``indices`` keeps."""
        positions = subset_positions(indices, len(self.data_address), self)
        return serialized_subset(self.data_bytes, self.data_address, positions)

    def load_data_list(self) -> list[dict]:
        """Read ``ann_file`` and turn each raw item into data infos with ``parse_data_info``."""
        file_metainfo, raw_data_list = load_annotation_file(self.ann_file)
        for key, value in file_metainfo.items():
            self._metainfo.setdefault(key, value)
        data_list: list[dict] = []
        for raw_data_info in raw_data_list:
            data_info = self.parse_data_info(raw_data_info)
            if isinstance(data_info, dict):
                data_list.append(data_info)
            elif isinstance(data_info, list) and all(isinstance(d, dict) for d in data_info):
                data_list.extend(data_info)
            else:
                raise TypeError(
                    f"{type(self).__name__}.parse_data_info must return a dict or a list of "
                    f"dicts, got {type(data_info).__name__}: {data_info!r}"
                )
        return data_list

    def parse_data_info(self, raw_data_info: dict) -> dict | list[dict]:
        """One raw item of the annotation file as a data info: each ``data_prefix`` key's value
        is joined to its folder."""
        for key, prefix in self.data_prefix.items():
            if key not in raw_data_info:
                raise KeyError(
                    f"the item {raw_data_info!r} of {self.ann_file!r} has no {key!r} key, "
                    f"which data_prefix {self.data_prefix!r} names"
                )
            raw_data_info[key] = join_path(prefix, raw_data_info[key])
        return raw_data_info

    def filter_data(self) -> list[dict]:
        """The data list after filtering by ``filter_cfg``: unchanged here, for subclasses."""
        return self.data_list

    def get_cat_ids(self, idx: int) -> list[int]:
        """The category ids of item ``idx`` (ClassBalancedDataset needs them)."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_cat_ids")

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """A fresh copy of item ``idx``'s data info, with its position as ``sample_idx``."""
        idx = checked_index(idx, len(self), self)
        if self.serialize_data:
            data_info = item_at(self.data_bytes, self.data_address, idx)
        else:
            data_info = copy.deepcopy(self.data_list[idx])
        data_info["sample_idx"] = idx
        return data_info

    def prepare_data(self, idx: int) -> Any:
        """Item ``idx`` through the pipeline (None when a transform rejects it)."""
        return self.pipeline(self.get_data_info(idx))

    def __getitem__(self, idx: int) -> Any:
        if not self._fully_initialized:
            print_log(
                f"{type(self).__name__} is initialized on first access; call full_init() "
                "before building the DataLoader, so that each worker does not do it again",
                logger="current",
                level=logging.WARNING,
            )
            self.full_init()
        if self.test_mode:
            data = self.prepare_data(idx)
            if data is None:
                raise RuntimeError(
                    f"the test pipeline of {type(self).__name__} returned None for item {idx}; "
                    "in test mode every item must pass the pipeline"
                )
            return data
        # In training a rejected item is replaced by a random other one, as MMEngine does.
        for _ in range(self.max_refetch + 1):
            data = self.prepare_data(idx)
            if data is not None:
                return data
            idx = self._rand_another()
        raise RuntimeError(
            f"the pipeline of {type(self).__name__} returned None for {self.max_refetch + 1} "
            f"items in a row (max_refetch={self.max_refetch}); check the data paths and the "
            "pipeline"
        )

    def _rand_another(self) -> int:
        return int(np.random.randint(0, len(self)))

    @force_full_init
    def __len__(self) -> int:
        return len(self.data_address) if self.serialize_data else len(self.data_list)

    @force_full_init
    def get_subset_(self, indices: int | Sequence[int]) -> None:
        """Keep only ``indices`` (an int: the first N, or the last -N) in this dataset."""
        self._take(self, subset_positions(indices, len(self), self))

    @force_full_init
    def get_subset(self, indices: int | Sequence[int]) -> BaseDataset:
        """A new dataset with only ``indices`` (an int: the first N, or the last -N); this one
        is left unchanged."""
        subset = self._copy_without_annotation()
        self._take(subset, subset_positions(indices, len(self), self))
        return subset

    def _take(self, target: BaseDataset, positions: list[int]) -> None:
        if self.serialize_data:
            target.data_bytes, target.data_address = serialized_subset(
                self.data_bytes, self.data_address, positions
            )
        else:
            target.data_list = [self.data_list[position] for position in positions]

    def _copy_without_annotation(self, memo: dict | None = None) -> BaseDataset:
        """A deep copy of everything but the data list (the subset fills that in)."""
        memo = {} if memo is None else memo
        other = type(self).__new__(type(self))
        memo[id(self)] = other
        for key, value in self.__dict__.items():
            if key not in _DATA_ATTRIBUTES:
                other.__dict__[key] = copy.deepcopy(value, memo)
        other.data_list = []
        return other
