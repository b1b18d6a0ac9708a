"""The build functions MMEngine gives its runner, model and scheduler registries.

They take the same arguments as ``treadle.registry.build_from_cfg`` and add one thing each:
a runner is made by its class's ``from_cfg``; a list of model configs becomes an
``nn.Sequential``; a scheduler with ``convert_to_iter_based=True`` is built per iteration from
epoch-based arguments. torch is imported only when a list of models is built, so importing the
registries stays light.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from treadle.registry import Registry, build_from_cfg


def _scope_and_args(cfg: Any) -> tuple[str | None, dict[str, Any]]:
    # A treadle.config Config (what tools/train.py passes to RUNNERS.build) wraps its dict.
    if not isinstance(cfg, Mapping) and isinstance(getattr(cfg, "_cfg_dict", None), Mapping):
        cfg = cfg._cfg_dict
    if not isinstance(cfg, Mapping):
        raise TypeError(
            f"cfg must be a mapping such as a dict or a ConfigDict, got "
            f"{type(cfg).__name__}: {cfg!r}"
        )
    args = dict(cfg)
    return args.pop("_scope_", None), args


def build_runner_from_cfg(cfg: Mapping[str, Any], registry: Registry) -> Any:
    """Build a runner: the class named by ``cfg['runner_type']`` (``'Runner'`` when absent),
    through its ``from_cfg`` with the whole config.

    Example:
        >>> RUNNERS = Registry('runner', build_func=build_runner_from_cfg, scope='demo')
        >>> @RUNNERS.register_module()
        ... class Runner:
        ...     @classmethod
        ...     def from_cfg(cls, cfg):
        ...         return cfg['work_dir']
        >>> RUNNERS.build(dict(work_dir='work_dirs/a'))
        'work_dirs/a'
    """
    scope, args = _scope_and_args(cfg)
    with registry.switch_scope_and_registry(scope) as scoped:
        runner_type = args.get("runner_type", "Runner")
        if isinstance(runner_type, str):
            runner_cls = scoped.get(runner_type)
            if runner_cls is None:
                from treadle.registry.suggestions import missing_type_message

                raise KeyError(missing_type_message(scoped, runner_type))
        elif inspect.isclass(runner_type):
            runner_cls = runner_type
        else:
            raise TypeError(
                f"runner_type must be a registered name or a class, got "
                f"{type(runner_type).__name__}: {runner_type!r}"
            )
        if not hasattr(runner_cls, "from_cfg"):
            raise TypeError(
                f"{runner_cls.__qualname__} cannot be built from a config: it has no "
                "from_cfg classmethod"
            )
        # The runner receives the config as written (a ConfigDict stays one).
        return runner_cls.from_cfg(cfg)


def build_model_from_cfg(
    cfg: Mapping[str, Any] | list[Mapping[str, Any]],
    registry: Registry,
    default_args: Mapping[str, Any] | None = None,
) -> Any:
    """Build a model; a list of configs gives an ``nn.Sequential`` of the built modules.

    Example:
        >>> import torch.nn as nn
        >>> MODELS = Registry('model', build_func=build_model_from_cfg, scope='demo')
        >>> _ = MODELS.register_module(module=nn.Linear)
        >>> _ = MODELS.register_module(module=nn.ReLU)
        >>> MODELS.build([dict(type='Linear', in_features=2, out_features=3), dict(type='ReLU')])
        Sequential(
          (0): Linear(in_features=2, out_features=3, bias=True)
          (1): ReLU()
        )
    """
    if isinstance(cfg, list):
        import torch.nn as nn

        return nn.Sequential(*(build_from_cfg(item, registry, default_args) for item in cfg))
    return build_from_cfg(cfg, registry, default_args)


def build_scheduler_from_cfg(
    cfg: Mapping[str, Any],
    registry: Registry,
    default_args: Mapping[str, Any] | None = None,
) -> Any:
    """Build a parameter scheduler. With ``convert_to_iter_based=True`` the class's
    ``build_iter_from_epoch`` makes a per-iteration scheduler from epoch-based arguments
    (``default_args`` then must hold ``epoch_length``).

    Example:
        >>> SCHEDULERS = Registry('scheduler', build_func=build_scheduler_from_cfg, scope='demo')
        >>> @SCHEDULERS.register_module()
        ... class Step:
        ...     def __init__(self, milestones):
        ...         self.milestones = milestones
        ...     @classmethod
        ...     def build_iter_from_epoch(cls, milestones, epoch_length):
        ...         return cls([m * epoch_length for m in milestones])
        >>> SCHEDULERS.build(dict(type='Step', milestones=[2, 4], convert_to_iter_based=True),
        ...                  default_args=dict(epoch_length=10)).milestones
        [20, 40]
    """
    scope, args = _scope_and_args(cfg)
    if not args.pop("convert_to_iter_based", False):
        if scope is not None:
            args["_scope_"] = scope
        # The runner passes epoch_length to every scheduler; only a conversion uses it.
        if default_args is not None and "epoch_length" in default_args:
            default_args = {k: v for k, v in default_args.items() if k != "epoch_length"}
        return build_from_cfg(args, registry, default_args)
    with registry.switch_scope_and_registry(scope) as scoped:
        scheduler_type = args.pop("type", None)
        scheduler_cls = (
            scoped.get(scheduler_type) if isinstance(scheduler_type, str) else (scheduler_type)
        )
        if scheduler_cls is None:
            from treadle.registry.suggestions import missing_type_message

            raise KeyError(missing_type_message(scoped, scheduler_type))
        if not hasattr(scheduler_cls, "build_iter_from_epoch"):
            raise TypeError(
                f"convert_to_iter_based=True needs a scheduler with a build_iter_from_epoch "
                f"classmethod; {getattr(scheduler_cls, '__qualname__', scheduler_cls)!r} has none"
            )
        if default_args is not None:
            for key, value in default_args.items():
                args.setdefault(key, value)
        return scheduler_cls.build_iter_from_epoch(**args)
