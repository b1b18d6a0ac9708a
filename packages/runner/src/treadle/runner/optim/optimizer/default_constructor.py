"""DefaultOptimWrapperConstructor: an optimizer wrapper for a model from an ``optim_wrapper``
config, with per-parameter learning rates and weight decays (``paramwise_cfg``)."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from numbers import Real
from typing import Any

from torch import nn

from treadle.logging import print_log
from treadle.runner.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIM_WRAPPERS, OPTIMIZERS

from .errors import OptimConfigError
from .third_party import real_optimizer_class

# The multipliers of paramwise_cfg, and which optimizer setting each multiplies.
LR_MULTS = ("bias_lr_mult", "dcn_offset_lr_mult")
DECAY_MULTS = ("bias_decay_mult", "norm_decay_mult", "dwconv_decay_mult", "flat_decay_mult")
PARAMWISE_KEYS = ("custom_keys", *LR_MULTS, *DECAY_MULTS, "bypass_duplicate")

_NORMS = (
    nn.modules.batchnorm._BatchNorm,
    nn.modules.instancenorm._InstanceNorm,
    nn.GroupNorm,
    nn.LayerNorm,
)
# mmcv.ops' deformable convolutions, known by class name so that mmcv is never imported.
_DCN_CLASS_NAMES = ("DeformConv2d", "ModulatedDeformConv2d")


def _is_dcn(module: nn.Module) -> bool:
    return any(cls.__name__ in _DCN_CLASS_NAMES for cls in type(module).__mro__)


def _match_name(prefix: str, name: str) -> str:
    # The string custom_keys are searched in, as MMEngine builds it: a parameter of the model
    # itself is '.weight', so a key '.weight' matches every weight at any depth.
    return f"{prefix}.{name}"


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class DefaultOptimWrapperConstructor:
    """Build the optimizer wrapper of a model, with settings per parameter.

    Args:
        optim_wrapper_cfg: the ``optim_wrapper`` config: ``optimizer`` (required: the optimizer's
            config, ``type`` and its arguments such as ``lr`` and ``weight_decay``), ``type`` (the
            wrapper, default ``'OptimWrapper'``) and the wrapper's other arguments.
        paramwise_cfg: settings per parameter, all optional:

            - ``custom_keys`` (dict): ``{key: dict(lr_mult=..., decay_mult=..., **other)}``. A
              parameter whose name contains ``key`` gets ``lr * lr_mult`` and
              ``weight_decay * decay_mult`` (and the other settings as they are), and no other
              rule applies to it. The longest matching key wins; among keys of one length, the
              first in alphabetical order.
            - ``bias_lr_mult``: multiplies the lr of biases (not of norm layers, nor of the
              layers inside deformable convolutions).
            - ``bias_decay_mult``: multiplies the weight decay of biases (not of norm layers,
              depthwise convolutions, nor inside deformable convolutions).
            - ``norm_decay_mult``: multiplies the weight decay of norm layers' weights and biases.
            - ``dwconv_decay_mult``: multiplies the weight decay of depthwise Conv2d layers.
            - ``flat_decay_mult``: multiplies the weight decay of the other 1-D parameters.
            - ``dcn_offset_lr_mult``: multiplies the lr of the offset convolution
              (``conv_offset``) of deformable convolutions.
            - ``bypass_duplicate`` (bool): leave out a parameter met a second time (shared
              between modules) instead of failing; default False.

            Weight decay rules are tried in this order and the first that applies wins: norm,
            bias, depthwise conv, flat. Parameters with ``requires_grad=False`` are left out.

    With no ``paramwise_cfg`` all parameters are in one group. The settings given to each
    parameter are logged (``paramwise_options -- name:lr=..., weight_decay=...``).

    Example:
        >>> model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))
        >>> constructor = DefaultOptimWrapperConstructor(
        ...     dict(optimizer=dict(type='SGD', lr=0.1, weight_decay=1e-4)),
        ...     paramwise_cfg=dict(norm_decay_mult=0.0, custom_keys={'0.': dict(lr_mult=0.1)}))
        >>> optim_wrapper = constructor(model)  # doctest: +SKIP
        >>> [(g['lr'], g['weight_decay']) for g in optim_wrapper.optimizer.param_groups]
        ... # doctest: +SKIP
        [(0.01, 0.0001), (0.01, 0.0001), (0.1, 0.0), (0.1, 0.0)]
    """

    def __init__(
        self, optim_wrapper_cfg: Mapping[str, Any], paramwise_cfg: Mapping[str, Any] | None = None
    ) -> None:
        if not isinstance(optim_wrapper_cfg, Mapping):
            raise TypeError(
                f"optim_wrapper_cfg must be a dict, got {type(optim_wrapper_cfg).__name__}: "
                f"{optim_wrapper_cfg!r}"
            )
        if "optimizer" not in optim_wrapper_cfg:
            raise OptimConfigError(
                f"`optim_wrapper_cfg` must contain the key 'optimizer' (the optimizer's config, "
                f"e.g. optimizer=dict(type='SGD', lr=0.01)); it has {sorted(optim_wrapper_cfg)}"
            )
        self.optim_wrapper_cfg = dict(optim_wrapper_cfg)
        self.optimizer_cfg = self.optim_wrapper_cfg.pop("optimizer")
        if not isinstance(self.optimizer_cfg, Mapping):
            raise TypeError(
                f"optim_wrapper_cfg['optimizer'] must be a dict (type=... and the optimizer's "
                f"arguments), got {type(self.optimizer_cfg).__name__}: {self.optimizer_cfg!r}"
            )
        self.paramwise_cfg = {} if paramwise_cfg is None else paramwise_cfg
        self.base_lr = self.optimizer_cfg.get("lr", None)
        self.base_wd = self.optimizer_cfg.get("weight_decay", None)
        self._validate_cfg()

    # -- checking the config -------------------------------------------------------------------

    def _validate_cfg(self) -> None:
        if not isinstance(self.paramwise_cfg, Mapping):
            raise TypeError(
                f"paramwise_cfg must be None or a dict, got {type(self.paramwise_cfg).__name__}: "
                f"{self.paramwise_cfg!r}"
            )
        # A subclass with rules of its own reads keys of its own: only the built-in rules know
        # which keys are valid.
        if type(self).add_params is DefaultOptimWrapperConstructor.add_params:
            self._warn_unknown_keys()
        custom_keys = self.paramwise_cfg.get("custom_keys", {})
        if not isinstance(custom_keys, Mapping):
            raise TypeError(
                f"paramwise_cfg['custom_keys'] must be a dict of {{key: dict(lr_mult=..., "
                f"decay_mult=...)}}, got {type(custom_keys).__name__}: {custom_keys!r}"
            )
        for key, options in custom_keys.items():
            where = f"paramwise_cfg['custom_keys'][{key!r}]"
            if not isinstance(options, Mapping):
                raise TypeError(
                    f"{where} must be a dict such as dict(lr_mult=0.1, decay_mult=0.0), got "
                    f"{type(options).__name__}: {options!r}"
                )
            for mult in ("lr_mult", "decay_mult"):
                if mult in options:
                    self._check_mult(f"{where}[{mult!r}]", options[mult], mult == "lr_mult")
        for mult in (*LR_MULTS, *DECAY_MULTS):
            if mult in self.paramwise_cfg:
                where = f"paramwise_cfg[{mult!r}]"
                self._check_mult(where, self.paramwise_cfg[mult], mult in LR_MULTS)
        bypass = self.paramwise_cfg.get("bypass_duplicate", False)
        if not isinstance(bypass, bool):
            raise TypeError(
                f"paramwise_cfg['bypass_duplicate'] must be a bool, got {type(bypass).__name__}: "
                f"{bypass!r}"
            )

    def _check_mult(self, where: str, value: Any, is_lr: bool) -> None:
        if isinstance(value, bool) or not isinstance(value, Real):
            raise TypeError(f"{where} must be a number, got {type(value).__name__}: {value!r}")
        base, setting = (self.base_lr, "lr") if is_lr else (self.base_wd, "weight_decay")
        if base is None:
            raise ValueError(
                f"{where}={value!r} multiplies the optimizer's {setting}, but the optimizer "
                f"config {dict(self.optimizer_cfg)!r} sets no {setting}: set "
                f"optimizer.{setting} explicitly"
            )

    def _warn_unknown_keys(self) -> None:
        from treadle.registry.suggestions import close_matches

        for key in self.paramwise_cfg:
            if key in PARAMWISE_KEYS:
                continue
            matches = close_matches(str(key), PARAMWISE_KEYS, n=1)
            guess = f"; did you mean {matches[0]!r}?" if matches else ""
            print_log(
                f"paramwise_cfg has the key {key!r}, which DefaultOptimWrapperConstructor does "
                f"not use{guess} (its keys: {', '.join(PARAMWISE_KEYS)})",
                logger="current",
                level=logging.WARNING,
            )

    # -- building ------------------------------------------------------------------------------

    def add_params(
        self,
        params: list[dict],
        module: nn.Module,
        prefix: str = "",
        is_dcn_module: int | float | None = None,
    ) -> None:
        """Append one param group per parameter of ``module`` and its children to ``params``.

        Args:
            params: the param groups so far; appended to in place.
            module: the module whose parameters to add.
            prefix: the module's name in the model (``'backbone.layer1'``).
            is_dcn_module: whether ``module`` is a child of a deformable convolution.
        """
        cfg = self.paramwise_cfg
        custom_keys = cfg.get("custom_keys", {})
        # Longest key first; among equally long keys, alphabetical order.
        sorted_keys = sorted(sorted(custom_keys), key=len, reverse=True)
        bypass_duplicate = cfg.get("bypass_duplicate", False)
        is_norm = isinstance(module, _NORMS)
        is_dwconv = isinstance(module, nn.Conv2d) and module.in_channels == module.groups
        seen = self._added_params(params)

        for name, param in module.named_parameters(recurse=False):
            full_name = f"{prefix}.{name}" if prefix else name
            first_name = seen.names.get(id(param))
            if bypass_duplicate and first_name is not None:
                print_log(
                    f"{full_name} is the parameter {first_name} again; it is skipped since "
                    f"bypass_duplicate=True",
                    logger="current",
                    level=logging.WARNING,
                )
                continue
            if not param.requires_grad:
                print_log(
                    f"{full_name} is skipped since its requires_grad=False",
                    logger="current",
                    level=logging.WARNING,
                )
                continue
            if first_name is not None:
                raise ValueError(
                    f"some parameters appear in more than one parameter group: {full_name} is "
                    f"the parameter {first_name} again (shared between modules), and a "
                    f"parameter can be in one param group only: set "
                    f"paramwise_cfg['bypass_duplicate']=True to optimize it once"
                )
            param_group: dict[str, Any] = {"params": [param]}
            key = next((k for k in sorted_keys if k in _match_name(prefix, name)), None)
            if key is not None:
                self._apply_custom_key(param_group, custom_keys[key])
            else:
                self._apply_rules(
                    param_group, module, name, param, prefix, is_norm, is_dwconv, is_dcn_module
                )
            params.append(param_group)
            seen.record(params, full_name)
            settings = ", ".join(f"{k}={v}" for k, v in param_group.items() if k != "params")
            if settings:
                print_log(f"paramwise_options -- {full_name}:{settings}", logger="current")

        child_is_dcn = _is_dcn(module)
        for child_name, child in module.named_children():
            child_prefix = f"{prefix}.{child_name}" if prefix else child_name
            self.add_params(params, child, prefix=child_prefix, is_dcn_module=child_is_dcn)

    def _added_params(self, params: list[dict]) -> _SeenParams:
        """The parameters already in ``params``, kept across the recursive calls of one build
        so that finding a duplicate costs O(1), not a scan of every group."""
        seen = getattr(self, "_seen", None)
        if seen is None or seen.params is not params:
            seen = self._seen = _SeenParams(params)
        seen.sync()
        return seen

    def _apply_custom_key(self, param_group: dict[str, Any], options: Mapping[str, Any]) -> None:
        if self.base_lr is not None:
            param_group["lr"] = self.base_lr * options.get("lr_mult", 1.0)
        if self.base_wd is not None:
            param_group["weight_decay"] = self.base_wd * options.get("decay_mult", 1.0)
        # Every setting of the key goes to the group too (momentum=..., and the mults
        # themselves, which layer-wise schedulers read).
        param_group.update(options)

    def _apply_rules(
        self,
        param_group: dict[str, Any],
        module: nn.Module,
        name: str,
        param: nn.Parameter,
        prefix: str,
        is_norm: bool,
        is_dwconv: bool,
        is_dcn_module: Any,
    ) -> None:
        cfg = self.paramwise_cfg
        bias_lr_mult = cfg.get("bias_lr_mult")
        if name == "bias" and not (is_norm or is_dcn_module) and bias_lr_mult is not None:
            param_group["lr"] = self.base_lr * bias_lr_mult
        dcn_offset_lr_mult = cfg.get("dcn_offset_lr_mult")
        if (
            "conv_offset" in prefix
            and is_dcn_module
            and dcn_offset_lr_mult is not None
            and isinstance(module, nn.Conv2d)
        ):
            param_group["lr"] = self.base_lr * dcn_offset_lr_mult
        if self.base_wd is None:
            return
        if is_norm and cfg.get("norm_decay_mult") is not None:
            param_group["weight_decay"] = self.base_wd * cfg["norm_decay_mult"]
        elif name == "bias" and not is_dcn_module and cfg.get("bias_decay_mult") is not None:
            param_group["weight_decay"] = self.base_wd * cfg["bias_decay_mult"]
        elif is_dwconv and cfg.get("dwconv_decay_mult") is not None:
            param_group["weight_decay"] = self.base_wd * cfg["dwconv_decay_mult"]
        elif param.ndim == 1 and not is_dcn_module and cfg.get("flat_decay_mult") is not None:
            param_group["weight_decay"] = self.base_wd * cfg["flat_decay_mult"]

    def __call__(self, model: nn.Module) -> Any:
        """Build the optimizer wrapper of ``model`` (a model wrapper's inner model is used)."""
        from treadle.runner.model import unwrap_model  # the model layer, loaded on first build

        model = _inner_model(unwrap_model(model))
        optimizer_cfg = dict(self.optimizer_cfg)
        optimizer_class = _optimizer_class(optimizer_cfg.get("type"))
        # Some optimizers (colossalai's HybridAdam) call their first argument model_params.
        first_argument = next(iter(inspect.signature(optimizer_class).parameters))
        if not self.paramwise_cfg:
            optimizer_cfg[first_argument] = list(model.parameters())
        else:
            params: list[dict] = []
            self._seen = None
            try:
                self.add_params(params, model)
            finally:
                self._seen = None
            optimizer_cfg[first_argument] = params
            self._warn_unmatched_custom_keys(model)
        optimizer = OPTIMIZERS.build(optimizer_cfg)
        optim_wrapper_cfg = dict(self.optim_wrapper_cfg)
        optim_wrapper_cfg.setdefault("type", "OptimWrapper")
        return OPTIM_WRAPPERS.build(optim_wrapper_cfg, default_args=dict(optimizer=optimizer))

    def _warn_unmatched_custom_keys(self, model: nn.Module) -> None:
        custom_keys = self.paramwise_cfg.get("custom_keys", {})
        if not custom_keys:
            return
        names = [
            _match_name(*full.rpartition(".")[::2])
            for full, _ in model.named_parameters(remove_duplicate=False)
        ]
        for key in custom_keys:
            if not any(key in name for name in names):
                print_log(
                    f"paramwise_cfg['custom_keys'] has the key {key!r}, which is part of no "
                    f"parameter name of {type(model).__name__}: it changes nothing",
                    logger="current",
                    level=logging.WARNING,
                )


def _inner_model(model: nn.Module) -> nn.Module:
    """``model.module`` when ``model`` is a wrapper in all but registration, else ``model``.

    MMEngine's constructor optimizes ``model.module`` whenever that attribute exists, so a toolbox
    may wrap a model in a bare ``nn.Module`` holding it as ``module`` (mmsegmentation's layer decay
    constructors match names such as ``backbone.layers.0``, without a ``module.`` prefix). Where
    every parameter belongs to ``model.module`` that is the same set of parameters, so we do the
    same. Where ``model`` has parameters of its own, MMEngine would leave them out of the
    optimizer; we keep them in (the model is kept whole) and say so.
    """
    inner = getattr(model, "module", None)
    if not isinstance(inner, nn.Module) or inner is model:
        return model
    inner_ids = {id(param) for param in inner.parameters()}
    outside = [name for name, param in model.named_parameters() if id(param) not in inner_ids]
    if not outside:
        return inner
    print_log(
        f"{type(model).__name__} has a child named 'module' and parameters outside it "
        f"({', '.join(outside[:3])}{', ...' if len(outside) > 3 else ''}): all of its parameters "
        "are optimized, where MMEngine would optimize only those of model.module",
        logger="current",
        level=logging.WARNING,
    )
    return model


class _SeenParams:
    """{id(parameter): name} of the parameters in a list of param groups."""

    def __init__(self, params: list[dict]) -> None:
        self.params = params
        self.names: dict[int, str] = {}
        self.synced = 0

    def sync(self) -> None:
        # Groups a caller put in the list itself (a subclass's add_params) have no name here.
        for group in self.params[self.synced :]:
            for param in group["params"]:
                self.names.setdefault(id(param), "added before")
        self.synced = len(self.params)

    def record(self, params: list[dict], name: str) -> None:
        for param in params[-1]["params"]:
            self.names[id(param)] = name
        self.synced = len(params)


def _optimizer_class(optimizer_type: Any) -> Any:
    """The class the optimizer config's ``type`` names (a lazily registered optimizer is
    resolved, so a missing optional package fails here with its install hint)."""
    if optimizer_type is None:
        raise KeyError("the optimizer config needs the key 'type' (e.g. type='SGD')")
    if isinstance(optimizer_type, str):
        with OPTIMIZERS.switch_scope_and_registry(None) as registry:
            found = registry.get(optimizer_type)
            if found is None:
                from treadle.registry.suggestions import missing_type_message

                raise KeyError(missing_type_message(registry, optimizer_type))
        optimizer_type = found
    return real_optimizer_class(optimizer_type)
