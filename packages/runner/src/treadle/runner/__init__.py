"""treadle.runner: the training engine: Runner, model, optim, hooks, loops, evaluator.

Like ``mmengine.runner``, this package offers the Runner, its loops, the log processor, the
checkpoint functions (``treadle.runner.load_checkpoint``...) and ``autocast``. They are imported
on first access, so ``import treadle.runner.registry`` does not pay for torch.

Example:
    >>> from treadle.runner import autocast, save_checkpoint
    >>> autocast.__module__
    'treadle.runner.device.autocast'
"""

from __future__ import annotations

from treadle.runner.utils.lazy import lazy_attributes

__version__ = "0.1.1"

# The names of ``mmengine.runner`` that live in a subpackage here, by the subpackage.
_REEXPORTS = {
    "treadle.runner.checkpoint": (
        "CheckpointLoader",
        "CorruptCheckpointError",
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
        "load_state_dict",
        "save_checkpoint",
        "weights_to_cpu",
    ),
    "treadle.runner.device": ("autocast",),
    "treadle.runner.hooks": ("CheckpointSaveError",),
    "treadle.runner.hooks.priority": ("Priority", "get_priority"),
    "treadle.runner.log_processor": ("LogProcessor",),
    "treadle.runner.loops": (
        "BaseLoop",
        "EpochBasedTrainLoop",
        "IterBasedTrainLoop",
        "NonFiniteLossError",
        "TestLoop",
        "ValLoop",
    ),
    "treadle.runner.runner": (
        "FlexibleRunner",
        "RankFailureError",
        "Runner",
        "set_random_seed",
        "turn_on_activation_checkpointing",
    ),
}
_MODULE_OF = {name: module for module, names in _REEXPORTS.items() for name in names}

__all__ = ["__version__", *sorted(_MODULE_OF)]


__getattr__ = lazy_attributes(__name__, _MODULE_OF)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
