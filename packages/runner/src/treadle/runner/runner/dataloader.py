"""Building a DataLoader from a config, as MMEngine's ``Runner.build_dataloader``."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sized
from functools import partial
from typing import Any

from torch.utils.data import DataLoader

from treadle.dist import get_rank, get_world_size
from treadle.runner.dataset import worker_init_fn
from treadle.runner.registry import DATA_SAMPLERS, DATASETS, FUNCTIONS

from .cfg_args import as_cfg, is_cfg
from .dataloader_errors import NamingDataLoader
from .elastic_loader import elastic_batches


class SlicedDataset:
    """The first ``length`` samples of ``dataset`` (``num_batch_per_epoch``, for debugging);
    other attributes (``metainfo``...) are the dataset's.

    Example:
        >>> len(SlicedDataset(list(range(10)), 4))
        4
    """

    def __init__(self, dataset: Any, length: int) -> None:
        self._dataset = dataset
        self._length = min(length, len(dataset))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dataset, name)

    def __getitem__(self, index: int) -> Any:
        if index >= self._length:
            raise IndexError(f"index {index} is past the {self._length} samples kept")
        return self._dataset[index]

    def __len__(self) -> int:
        return self._length


def _batch_size(cfg: Mapping[str, Any], where: str) -> int:
    if "batch_size" in cfg:
        return cfg["batch_size"]
    batch_sampler = cfg.get("batch_sampler")
    if is_cfg(batch_sampler) and "batch_size" in batch_sampler:
        return batch_sampler["batch_size"]
    raise ValueError(f"{where}: num_batch_per_epoch needs batch_size in the dataloader config")


def _function(cfg: Any, key: str, where: str) -> Any:
    """A callable from ``dict(type=name_or_callable, **kwargs)``, or a callable as it is."""
    if callable(cfg):
        return cfg
    if not is_cfg(cfg) or "type" not in cfg:
        raise TypeError(
            f"{where}.{key} should be a dict or callable object: a dict with 'type' (a function "
            f"registered in FUNCTIONS, or the function itself), or the function; got "
            f"{type(cfg).__name__}: {cfg!r}"
        )
    kwargs = dict(cfg)
    kind = kwargs.pop("type")
    function = FUNCTIONS.get(kind) if isinstance(kind, str) else kind
    if function is None:
        raise KeyError(f"{where}.{key}: {kind!r} is not registered in FUNCTIONS")
    if not callable(function):
        raise TypeError(f"{where}.{key}: type must name a function, got {kind!r}")
    return partial(function, **kwargs)


def build_dataloader(
    dataloader: DataLoader | Mapping[str, Any],
    seed: int | None = None,
    diff_rank_seed: bool = False,
    where: str = "dataloader",
    elastic: Any = None,
) -> DataLoader:
    """A DataLoader from ``dataloader`` (returned as is when it is one already).

    The config holds ``dataset`` and ``sampler`` (configs or objects), optionally
    ``batch_sampler``, ``collate_fn`` (default ``pseudo_collate``, as MMEngine),
    ``worker_init_fn``, ``num_batch_per_epoch`` (keep that many batches per epoch) and every
    DataLoader argument. The sampler gets ``seed`` (None when ``diff_rank_seed``, so that ranks
    agree on one shared order); workers are seeded from ``seed``, the rank and their id.
    A loader that yields no batch is refused: a run over it would train nothing, or loop
    forever when iteration-based. ``elastic`` (an ElasticPlan, the train loader of a run with
    ``elastic`` set) makes its batches each process's part of the global batches, read with
    per-sample randomness (see ``runner/elastic_loader.py``).

    Example:
        >>> loader = build_dataloader(dict(
        ...     dataset=dict(type='RunnerToyDataset'), batch_size=4,
        ...     sampler=dict(type='DefaultSampler', shuffle=False)), seed=0)
        >>> len(loader)
        3
    """
    if isinstance(dataloader, DataLoader):
        return dataloader
    if not is_cfg(dataloader):
        raise TypeError(
            f"{where} should be a DataLoader or a config dict, got "
            f"{type(dataloader).__name__}: {dataloader!r}"
        )
    cfg = copy.deepcopy(dict(dataloader))
    for key in ("dataset", "sampler"):
        if key not in cfg:
            raise KeyError(f"{where} has no {key!r}: the dataloader config needs one")

    dataset = as_cfg(cfg.pop("dataset"))
    # The message of an empty loader names the type the user wrote.
    dataset_name = type(dataset).__name__
    if isinstance(dataset, Mapping):
        dataset_name = str(getattr(dataset.get("type"), "__name__", dataset.get("type")))
        dataset = DATASETS.build(dataset)
        if hasattr(dataset, "full_init"):
            dataset.full_init()

    num_batch_per_epoch = cfg.pop("num_batch_per_epoch", None)
    if num_batch_per_epoch is not None:
        if elastic is not None:
            kept = num_batch_per_epoch * elastic.global_batch_size
        else:
            kept = num_batch_per_epoch * _batch_size(cfg, where) * get_world_size()
        dataset = SlicedDataset(dataset, kept)

    sampler = as_cfg(cfg.pop("sampler"))
    if isinstance(sampler, Mapping):
        sampler = DATA_SAMPLERS.build(
            sampler, default_args=dict(dataset=dataset, seed=None if diff_rank_seed else seed)
        )

    batch_sampler = as_cfg(cfg.pop("batch_sampler", None))
    if isinstance(batch_sampler, Mapping):
        batch_sampler = DATA_SAMPLERS.build(
            batch_sampler, default_args=dict(sampler=sampler, batch_size=cfg.pop("batch_size", 1))
        )

    disable_warning = cfg.pop("disable_subprocess_warning", False)
    if "worker_init_fn" in cfg:
        init_fn = _function(cfg.pop("worker_init_fn"), "worker_init_fn", where)
    elif seed is not None:
        init_fn = partial(
            worker_init_fn,
            num_workers=cfg.get("num_workers", 0),
            rank=get_rank(),
            seed=seed,
            disable_subprocess_warning=disable_warning,
        )
    else:
        init_fn = None

    collate_fn = _function(cfg.pop("collate_fn", dict(type="pseudo_collate")), "collate_fn", where)
    if elastic is not None:
        batch_sampler, collate_fn = elastic_batches(
            cfg, sampler, batch_sampler, collate_fn, elastic, where
        )
        cfg["keyed_samples"] = True
    try:
        # Its errors name the dataset index and the worker (see dataloader_errors).
        loader = NamingDataLoader(
            where=where,
            dataset=dataset,
            sampler=sampler if batch_sampler is None else None,
            batch_sampler=batch_sampler,
            collate_fn=collate_fn,
            worker_init_fn=init_fn,
            **cfg,
        )
    except TypeError as error:
        raise TypeError(f"{where}: {error}") from error
    _check_not_empty(loader, dataset, dataset_name, where)
    return loader


def _check_not_empty(loader: DataLoader, dataset: Any, name: str, where: str) -> None:
    if not isinstance(dataset, Sized):
        return
    try:
        batches = len(loader)
    except TypeError:
        return
    if batches == 0:
        raise ValueError(
            f"{where} yields no batch: its dataset {name} has {len(dataset)} "
            f"samples (batch_size={loader.batch_size}, drop_last={loader.drop_last}); check "
            f"the dataset's path and filters"
        )
