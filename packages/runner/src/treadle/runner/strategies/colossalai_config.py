"""What a ColossalAIStrategy's ``plugin`` and ``mixed_precision`` arguments name, checked
without colossalai installed; and the import that names the extra when it is missing."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

COLOSSALAI_EXTRA = "pip install 'treadle-runner[colossalai]'"

# MMEngine's plugin names, plus 'torch-ddp': the plugin that also runs on the CPU.
PLUGIN_NAMES = {
    "gemini": ("GeminiPlugin", {"precision": "bf16", "placement_policy": "auto"}),
    "lowlevel-zero": ("LowLevelZeroPlugin", {}),
    "torch-ddp": ("TorchDDPPlugin", {}),
}
MIXED_PRECISION_NAMES = {
    "fp16": "FP16TorchMixedPrecision",
    "fp16_apex": "FP16ApexMixedPrecision",
    "bf16": "BF16MixedPrecision",
    "fp8": "FP8MixedPrecision",
}


def import_colossalai() -> Any:
    """The ``colossalai`` module, or an ImportError that names the extra to install."""
    try:
        import colossalai
        import colossalai.booster
    except ImportError as error:
        raise ImportError(
            "ColossalAIStrategy needs the colossalai package, which is not installed (or does "
            f"not import: {error}): {COLOSSALAI_EXTRA}"
        ) from error
    return colossalai


def _closest(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def plugin_spec(plugin: str | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(class name in colossalai.booster.plugin, keyword arguments)`` for a ``plugin``
    argument: one of MMEngine's names ('gemini', 'lowlevel-zero'), 'torch-ddp', or a dict with
    ``type`` (a plugin class name) and its arguments.

    Example:
        >>> plugin_spec('lowlevel-zero')
        ('LowLevelZeroPlugin', {})
        >>> plugin_spec(dict(type='GeminiPlugin', placement_policy='static'))
        ('GeminiPlugin', {'placement_policy': 'static'})
    """
    if isinstance(plugin, str):
        if plugin not in PLUGIN_NAMES:
            raise ValueError(
                f"ColossalAIStrategy plugin={plugin!r} is not a plugin name"
                f"{_closest(plugin, list(PLUGIN_NAMES))}; use one of "
                f"{', '.join(map(repr, PLUGIN_NAMES))} or dict(type='<Plugin class>', ...)"
            )
        name, kwargs = PLUGIN_NAMES[plugin]
        return name, dict(kwargs)
    if isinstance(plugin, Mapping):
        kwargs = dict(plugin)
        name = kwargs.pop("type", None)
        if not isinstance(name, str):
            raise TypeError(
                f"ColossalAIStrategy plugin dict needs type='<Plugin class name>' (e.g. "
                f"'TorchDDPPlugin'), got {dict(plugin)!r}"
            )
        return name, kwargs
    raise TypeError(
        "ColossalAIStrategy plugin must be a name, a dict with type, or a built Plugin, got "
        f"{type(plugin).__name__}: {plugin!r}"
    )


def mixed_precision_spec(mixed_precision: str | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(class name in colossalai.booster.mixed_precision, keyword arguments)`` for a
    ``mixed_precision`` argument: 'fp16', 'fp16_apex', 'bf16', 'fp8' or a dict with ``type``.

    Example:
        >>> mixed_precision_spec('bf16')
        ('BF16MixedPrecision', {})
    """
    if isinstance(mixed_precision, str):
        if mixed_precision not in MIXED_PRECISION_NAMES:
            raise ValueError(
                f"ColossalAIStrategy mixed_precision={mixed_precision!r} is not one of "
                f"{', '.join(map(repr, MIXED_PRECISION_NAMES))}"
                f"{_closest(mixed_precision, list(MIXED_PRECISION_NAMES))}"
            )
        return MIXED_PRECISION_NAMES[mixed_precision], {}
    if isinstance(mixed_precision, Mapping):
        kwargs = dict(mixed_precision)
        name = kwargs.pop("type", None)
        if not isinstance(name, str):
            raise TypeError(
                "ColossalAIStrategy mixed_precision dict needs type='<MixedPrecision class "
                f"name>', got {dict(mixed_precision)!r}"
            )
        return name, kwargs
    raise TypeError(
        "ColossalAIStrategy mixed_precision must be a name, a dict with type or a built "
        f"MixedPrecision, got {type(mixed_precision).__name__}: {mixed_precision!r}"
    )


def build_from_module(module: Any, spec: tuple[str, dict[str, Any]], what: str) -> Any:
    """An instance of the class ``spec[0]`` of ``module`` built with ``spec[1]``; an unknown
    class name lists the closest ones."""
    name, kwargs = spec
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        names = [n for n in dir(module) if isinstance(getattr(module, n), type)]
        raise ValueError(
            f"colossalai has no {what} {name!r}{_closest(name, names)}; it has "
            f"{', '.join(sorted(names))}"
        )
    return cls(**kwargs)
