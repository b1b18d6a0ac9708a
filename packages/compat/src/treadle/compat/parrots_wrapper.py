"""``mmengine.utils.dl_utils.parrots_wrapper``: PyTorch's own classes under the names MMEngine
gives them (it also supported the Parrots framework; treadle runs on PyTorch only). mmcv and
the toolboxes import the private base classes from here to test a layer's kind."""

from __future__ import annotations

from typing import Any

import torch
from torch.nn import SyncBatchNorm
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd, _ConvTransposeMixin
from torch.nn.modules.instancenorm import _InstanceNorm
from torch.nn.modules.pooling import (
    _AdaptiveAvgPoolNd,
    _AdaptiveMaxPoolNd,
    _AvgPoolNd,
    _MaxPoolNd,
)
from torch.utils.data import DataLoader

from treadle.runner.utils.dl_utils import TORCH_VERSION


def is_rocm_pytorch() -> bool:
    """Whether this PyTorch is a ROCm (AMD) build.

    Example:
        >>> isinstance(is_rocm_pytorch(), bool)
        True
    """
    return getattr(torch.version, "hip", None) is not None


def get_build_config() -> str:
    """PyTorch's build configuration, as ``torch.__config__.show()`` prints it.

    Example:
        >>> 'PyTorch' in get_build_config()
        True
    """
    return torch.__config__.show()


# MMEngine's name for the DataLoader on PyTorch (Parrots had a pooled one).
PoolDataLoader = DataLoader


def _get_cuda_home() -> Any:
    from torch.utils.cpp_extension import CUDA_HOME

    return CUDA_HOME


# The private names are listed too: mmcv and the toolboxes import them from here.
__all__ = [
    "TORCH_VERSION",
    "DataLoader",
    "PoolDataLoader",
    "SyncBatchNorm",
    "_AdaptiveAvgPoolNd",
    "_AdaptiveMaxPoolNd",
    "_AvgPoolNd",
    "_BatchNorm",
    "_ConvNd",
    "_ConvTransposeMixin",
    "_InstanceNorm",
    "_MaxPoolNd",
    "_get_cuda_home",
    "get_build_config",
    "is_rocm_pytorch",
]
