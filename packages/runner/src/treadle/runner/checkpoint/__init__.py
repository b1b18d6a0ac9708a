"""treadle.runner.checkpoint: saving and loading checkpoints and model weights.

The API follows MMEngine 0.10's ``mmengine.runner.checkpoint``: ``from
mmengine.runner.checkpoint import load_checkpoint`` becomes ``from treadle.runner.checkpoint
import load_checkpoint``. Checkpoints are written atomically to local disks or any
treadle.fileio backend, as torch (``.pth``) or safetensors (``.safetensors``) files, and loaded
with ``weights_only=True`` unless the caller trusts the file and says so. Importing this package
registers the built-in loader schemes of CheckpointLoader.
"""

from __future__ import annotations

# They register CheckpointLoader's schemes, and Pretrained's loading functions in FUNCTIONS.
from . import model_zoos, registered, schemes  # noqa: F401
from .errors import MissingPrefixError, UnknownModelError, UnsafeCheckpointError
from .io import save_checkpoint
from .latest import find_latest_checkpoint
from .loader import CheckpointLoader, _load_checkpoint
from .model_loading import (
    _load_checkpoint_to_model,
    _load_checkpoint_with_prefix,
    load_checkpoint,
)
from .model_zoos import (
    get_deprecated_model_names,
    get_external_models,
    get_mmcls_models,
    get_torchvision_models,
)
from .remote_integrity import CorruptCheckpointError
from .schemes import (
    load_from_ceph,
    load_from_fileio,
    load_from_http,
    load_from_local,
    load_from_package,
    load_from_s3,
)
from .state import get_state_dict, load_state_dict, tensors_to_cpu, weights_to_cpu

__all__ = [
    "CheckpointLoader",
    "CorruptCheckpointError",
    "MissingPrefixError",
    "UnknownModelError",
    "UnsafeCheckpointError",
    "_load_checkpoint",
    "_load_checkpoint_to_model",
    "_load_checkpoint_with_prefix",
    "find_latest_checkpoint",
    "get_deprecated_model_names",
    "get_external_models",
    "get_mmcls_models",
    "get_state_dict",
    "get_torchvision_models",
    "load_checkpoint",
    "load_from_ceph",
    "load_from_fileio",
    "load_from_http",
    "load_from_local",
    "load_from_package",
    "load_from_s3",
    "load_state_dict",
    "save_checkpoint",
    "tensors_to_cpu",
    "weights_to_cpu",
]
