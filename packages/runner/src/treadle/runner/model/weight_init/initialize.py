"""``initialize(module, init_cfg)``: build the initializers an ``init_cfg`` names and run them,
then the ``override`` entries on the submodules they name."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from torch import nn

from treadle.registry.suggestions import close_matches
from treadle.runner.registry import WEIGHT_INITIALIZERS


def _as_cfg_list(init_cfg: Any, what: str) -> list[dict]:
    if isinstance(init_cfg, Mapping):
        return [dict(init_cfg)]
    if not isinstance(init_cfg, list):
        raise TypeError(
            f"{what} must be a dict or a list of dicts, got {type(init_cfg).__name__} {init_cfg!r}"
        )
    for index, cfg in enumerate(init_cfg):
        if not isinstance(cfg, Mapping):
            raise TypeError(f"{what}[{index}] must be a dict, got {type(cfg).__name__} {cfg!r}")
    return [dict(cfg) for cfg in init_cfg]


def _run(module: nn.Module, cfg: dict, wholemodule: bool = False) -> None:
    initializer = WEIGHT_INITIALIZERS.build(cfg)
    # Under override there is no `layer`: the initializer covers the whole named submodule.
    initializer.wholemodule = wholemodule
    initializer(module)


def _submodule(module: nn.Module, name: str, cfg: dict) -> nn.Module:
    try:
        found = module.get_submodule(name)
    except AttributeError:
        children = [n for n, _ in module.named_children()]
        hint = close_matches(name.split(".")[-1], children)
        near = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
        raise RuntimeError(
            f"init_cfg override names {name!r}, but {type(module).__name__} has no submodule "
            f"{name!r} (its children: {', '.join(children) or 'none'}){near} "
            f"(override {cfg})"
        ) from None
    return found


def _run_overrides(module: nn.Module, override: Any, parent_cfg: dict) -> None:
    for entry in _as_cfg_list(override, "init_cfg override"):
        cfg = copy.deepcopy(entry)
        name = cfg.pop("name", None)
        if name is None:
            raise ValueError(f"each init_cfg override must have the key 'name', got {entry}")
        if not cfg:
            # `override=dict(name='cls')` alone: the same initializer as the parent init_cfg.
            cfg = copy.deepcopy(parent_cfg)
        elif "type" not in cfg:
            raise ValueError(
                f"init_cfg override {entry} sets arguments but no 'type'; give the type, or "
                f"only 'name' to reuse the parent init_cfg"
            )
        _run(_submodule(module, name, entry), cfg, wholemodule=True)


def initialize(module: nn.Module, init_cfg: dict | list[dict]) -> None:
    """Initialize ``module`` as ``init_cfg`` says.

    Each config names an initializer of WEIGHT_INITIALIZERS (``Constant``, ``Xavier``,
    ``Normal``, ``TruncNormal``, ``Uniform``, ``Kaiming``, ``Caffe2Xavier``, ``Pretrained``)
    with its arguments; ``layer`` picks submodules by class name and ``override`` gives named
    submodules (``name``, dotted paths allowed) their own initializer.

    Example:
        >>> model = nn.Sequential(nn.Conv1d(3, 1, 3), nn.Linear(1, 2))
        >>> initialize(model, [dict(type='Constant', layer='Conv1d', val=1),
        ...                    dict(type='Constant', layer='Linear', val=2)])
        >>> float(model[1].weight.max())
        2.0
        >>> initialize(model, dict(type='Constant', val=0, layer='Conv1d',
        ...                        override=dict(name='1', type='Constant', val=3)))
        >>> float(model[1].weight.max())
        3.0
    """
    # Copies: one init_cfg is often shared by many blocks, and popping keys from it would
    # change how the next block is initialized.
    for cfg in copy.deepcopy(_as_cfg_list(init_cfg, "init_cfg")):
        override = cfg.pop("override", None)
        _run(module, cfg)
        if override is not None:
            cfg.pop("layer", None)
            _run_overrides(module, override, cfg)
