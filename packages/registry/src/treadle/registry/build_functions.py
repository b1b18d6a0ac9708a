"""``build_from_cfg``: the default way a registry turns a config into an object.

MMEngine's ``build_model_from_cfg``, ``build_runner_from_cfg`` and ``build_scheduler_from_cfg``
need the runner's classes; they belong to treadle.runner.
"""

from __future__ import annotations

from collections.abc import Mapping

from treadle.logging import ManagerMixin

from .errors import CfgKeyError
from .registry import Registry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _is_mapping(value: Any) -> bool:
    # Any mapping: a dict, a ConfigDict, and a Config, which is one by protocol (keys() and
    # [] reach its dict) without being a Mapping subclass. MMEngine takes all three.
    return isinstance(value, Mapping) or (hasattr(value, "keys") and hasattr(value, "__getitem__"))


def _check_inputs(cfg: Any, registry: Any, default_args: Any) -> None:
    # The phrases "cfg should be a dict, ConfigDict or Config, but got <class ...>" and the like
    # are MMEngine's, which its users' tests match.
    if not _is_mapping(cfg):
        raise TypeError(
            f"cfg should be a dict, ConfigDict or Config, but got {type(cfg)}: {cfg!r}; a cfg "
            "is a mapping of the arguments, with the 'type' to build"
        )
    # In MMEngine's order: a cfg without 'type' is reported before a wrong registry.
    if "type" not in cfg and not (_is_mapping(default_args) and "type" in default_args):
        name = getattr(registry, "name", None)
        by = f"the {name!r} registry" if isinstance(name, str) else "a registry"
        raise CfgKeyError(
            f"a cfg built by {by} needs the key 'type' (the name of what to build): cfg or "
            f'default_args must contain the key "type"; got cfg={dict(cfg)!r} and '
            f"default_args={default_args!r}"
        )
    if not isinstance(registry, Registry):
        raise TypeError(
            f"registry must be a mmengine.Registry object, but got {type(registry)}: "
            f"{registry!r}; pass a treadle.registry.Registry (what mmengine.Registry is under "
            "treadle.compat)"
        )
    if default_args is not None and not _is_mapping(default_args):
        raise TypeError(
            f"default_args should be a dict, ConfigDict, Config or None, but got "
            f"{type(default_args)}: {default_args!r}"
        )


def build_from_cfg(
    cfg: Mapping[str, Any], registry: Registry, default_args: Mapping[str, Any] | None = None
) -> Any:
    """Build the object ``cfg`` describes: ``cfg['type']`` called with the other keys.

    ``cfg`` and ``default_args`` are any mappings: dicts, ConfigDicts, or a whole Config.

    ``type`` is a name registered in ``registry`` (``'ResNet'``, ``'mydet.ResNet'``), or a
    class or function itself. ``default_args`` fill the keys ``cfg`` leaves out. The default
    scope, or the cfg's ``_scope_`` key, picks which registry of ``registry``'s tree the name is
    searched in. A ``ManagerMixin`` class is built with ``get_instance``.

    Example:
        >>> MODELS = Registry('models', scope='treadle')
        >>> @MODELS.register_module()
        ... class ResNet:
        ...     def __init__(self, depth, stages=4):
        ...         self.depth, self.stages = depth, stages
        >>> model = build_from_cfg(dict(type='ResNet', depth=50), MODELS, dict(stages=3))
        >>> model.depth, model.stages
        (50, 3)
    """
    # The common case, a dict with a 'type', passes with a few cheap tests; the rest is checked
    # (and explained) when something is off.
    if (
        type(cfg) is not dict
        or "type" not in cfg
        or default_args is not None
        or not isinstance(registry, Registry)
    ):
        _check_inputs(cfg, registry, default_args)
    args = dict(cfg)
    if default_args is not None:
        for key, value in default_args.items():
            args.setdefault(key, value)
    scope = args.pop("_scope_", None)
    if scope is None:
        return _build(args, registry._scoped_registry())
    with registry.switch_scope_and_registry(scope) as scoped_registry:
        return _build(args, scoped_registry)


def _build(args: dict[str, Any], registry: Registry) -> Any:
    obj_type = args.pop("type")
    if isinstance(obj_type, str):
        obj = registry.get(obj_type)
        if obj is None:
            from .suggestions import missing_type_message

            raise KeyError(missing_type_message(registry, obj_type))
    elif callable(obj_type):
        obj = obj_type  # a class, a function, a functools.partial...
    else:
        raise TypeError(
            f"the 'type' of a cfg must be a registered name, a class or a callable: type must be "
            f"a str or valid type, but got {type(obj_type)}: {obj_type!r}"
        )
    try:
        if isinstance(obj, type) and issubclass(obj, ManagerMixin):
            return obj.get_instance(**args)
        return obj(**args)
    except Exception as error:
        from .suggestions import build_failure_message, rewrap

        message = build_failure_message(obj, obj_type, registry, args, error)
        raise rewrap(error, message) from error
