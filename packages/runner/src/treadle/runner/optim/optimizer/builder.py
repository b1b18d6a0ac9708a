"""The optimizers registered by name, and ``build_optim_wrapper``.

``OPTIMIZERS`` holds every optimizer class of ``torch.optim`` under its own name (torch's
Adafactor as ``'TorchAdafactor'``: ``'Adafactor'`` is transformers', as in MMEngine), the
optimizers of torch_npu on Ascend machines, and the optimizers of the optional packages
(third_party.py) whether or not they are installed.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from treadle.logging import print_log
from treadle.runner.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS

from .third_party import (
    OptionalPackage,
    register_bitsandbytes_optimizers,
    register_dadaptation_optimizers,
    register_lazy_optimizer,
    register_lion_optimizers,
    register_sophia_optimizers,
    register_transformers_optimizers,
)

# Names of torch.optim classes registered under another name: MMEngine gives 'Adafactor' to
# transformers' optimizer, which came first.
_RENAMED = {"Adafactor": "TorchAdafactor"}


def _optimizer_classes(module: Any) -> list[tuple[str, type]]:
    # The base class torch.optim.Optimizer is one of them, registered as 'Optimizer' as in
    # MMEngine (a custom optimizer's config may name it with its own `defaults`).
    return [
        (name, value)
        for name, value in sorted(vars(module).items())
        if inspect.isclass(value) and issubclass(value, torch.optim.Optimizer)
    ]


def register_torch_optimizers() -> list[str]:
    """Register every optimizer class of ``torch.optim`` in OPTIMIZERS; return the names they
    are registered under.

    Example:
        >>> 'AdamW' in TORCH_OPTIMIZERS and 'TorchAdafactor' in TORCH_OPTIMIZERS
        True
    """
    names = []
    for attribute, optimizer_class in _optimizer_classes(torch.optim):
        name = _RENAMED.get(attribute, attribute)
        OPTIMIZERS.register_module(name=name, module=optimizer_class)
        names.append(name)
    return names


def register_torch_npu_optimizers() -> list[str]:
    """Register torch_npu's optimizers (on a machine with Ascend NPUs) under the names that
    torch.optim does not already take."""
    from treadle.runner.device import is_npu_available

    if not is_npu_available():
        return []
    import torch_npu

    npu_optim = getattr(torch_npu, "optim", None)
    names = []
    for name, optimizer_class in _optimizer_classes(npu_optim) if npu_optim else []:
        if name not in OPTIMIZERS.module_dict:
            OPTIMIZERS.register_module(name=name, module=optimizer_class)
            names.append(name)
    return names


# In this order: bitsandbytes' names that torch or lion-pytorch already took get 'bnb_'.
TORCH_OPTIMIZERS = register_torch_optimizers()
NPU_OPTIMIZERS = register_torch_npu_optimizers()
DADAPTATION_OPTIMIZERS = register_dadaptation_optimizers()
LION_OPTIMIZERS = register_lion_optimizers()
SOPHIA_OPTIMIZERS = register_sophia_optimizers()
BITSANDBYTES_OPTIMIZERS = register_bitsandbytes_optimizers()
TRANSFORMERS_OPTIMIZERS = register_transformers_optimizers()
# torch.distributed.optim takes about half a second to import (it pulls in FSDP and DTensor), so
# ZeroRedundancyOptimizer's name holds a stand-in that imports its module when one is built.
_ZERO_MODULE = OptionalPackage("torch", ("treadle.runner.optim.optimizer.zero_optimizer",), "")
register_lazy_optimizer(_ZERO_MODULE, "ZeroRedundancyOptimizer")


def build_optim_wrapper(model: nn.Module, cfg: Mapping[str, Any]) -> Any:
    """Build the optimizer wrapper ``cfg`` describes for ``model``.

    ``cfg`` is an ``optim_wrapper`` config: ``optimizer`` (the optimizer's config), ``type``
    (the wrapper, default ``'OptimWrapper'``) and its arguments, ``paramwise_cfg`` (per-parameter
    settings) and ``constructor`` (default ``'DefaultOptimWrapperConstructor'``), which is built
    from OPTIM_WRAPPER_CONSTRUCTORS with the rest and called with the model.

    Example:
        >>> model = torch.nn.Linear(2, 2)
        >>> wrapper = build_optim_wrapper(model, dict(
        ...     optimizer=dict(type='SGD', lr=0.1, weight_decay=1e-4),
        ...     paramwise_cfg=dict(bias_decay_mult=0.)))  # doctest: +SKIP
        >>> [group['weight_decay'] for group in wrapper.optimizer.param_groups]  # doctest: +SKIP
        [0.0001, 0.0]
    """
    if not isinstance(cfg, Mapping):
        raise TypeError(
            f"build_optim_wrapper's cfg must be a dict (the optim_wrapper config), got "
            f"{type(cfg).__name__}: {cfg!r}"
        )
    optim_wrapper_cfg = copy.deepcopy(dict(cfg))
    constructor_type = optim_wrapper_cfg.pop("constructor", "DefaultOptimWrapperConstructor")
    paramwise_cfg = optim_wrapper_cfg.pop("paramwise_cfg", None)
    _amp_on_half_precision_npu(optim_wrapper_cfg)
    constructor = OPTIM_WRAPPER_CONSTRUCTORS.build(
        dict(
            type=constructor_type,
            optim_wrapper_cfg=optim_wrapper_cfg,
            paramwise_cfg=paramwise_cfg,
        )
    )
    return constructor(model)


def _amp_on_half_precision_npu(optim_wrapper_cfg: dict[str, Any]) -> None:
    """Ascend NPUs before the 910B train only in mixed precision: a plain OptimWrapper becomes
    an AmpOptimWrapper there (another wrapper type the user chose is kept)."""
    from treadle.runner.device import is_npu_available, is_npu_support_full_precision

    if optim_wrapper_cfg.get("type", "OptimWrapper") != "OptimWrapper":
        return
    if is_npu_available() and not is_npu_support_full_precision():
        optim_wrapper_cfg["type"] = "AmpOptimWrapper"
        print_log(
            "this NPU trains only in mixed precision: the OptimWrapper is an AmpOptimWrapper",
            logger="current",
        )
