"""treadle.runner.dataset: datasets, dataset wrappers, resumable samplers and collate functions.

The API follows MMEngine 0.10's ``mmengine.dataset``: ``from mmengine.dataset import
BaseDataset`` becomes ``from treadle.runner.dataset import BaseDataset``. Importing this
package registers the built-in datasets (DATASETS), samplers (DATA_SAMPLERS) and collate
functions (FUNCTIONS); the root registries list it in their ``locations``, so configs name these
types without importing anything first. ``Compose`` is not registered (as in MMEngine): mmcv
registers its own in the root TRANSFORMS.
"""

from __future__ import annotations

from .base_dataset import BaseDataset
from .build_collate import build_collate_fn
from .class_balanced_dataset import ClassBalancedDataset
from .collate import COLLATE_FUNCTIONS, default_collate, pseudo_collate
from .compose import Compose
from .concat_dataset import ConcatDataset
from .default_sampler import DefaultSampler
from .full_init import force_full_init
from .infinite_sampler import InfiniteSampler
from .repeat_dataset import RepeatDataset
from .worker_init import worker_init_fn

__all__ = [
    "COLLATE_FUNCTIONS",
    "BaseDataset",
    "ClassBalancedDataset",
    "Compose",
    "ConcatDataset",
    "DefaultSampler",
    "InfiniteSampler",
    "RepeatDataset",
    "build_collate_fn",
    "default_collate",
    "force_full_init",
    "pseudo_collate",
    "worker_init_fn",
]
