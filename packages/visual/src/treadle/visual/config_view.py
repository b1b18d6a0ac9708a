"""Read a config without importing treadle.config (which treadle.visual may not depend on).

``add_config`` receives a treadle ``Config``, an MMEngine ``Config`` or a plain dict; both
Config classes have ``pretty_text`` and ``to_dict``, so duck typing covers all three.
"""

from __future__ import annotations

import pprint
from collections.abc import Mapping
from typing import Any


def config_text(config: Any) -> str:
    """The config as Python source text: ``pretty_text`` when it has one, else ``pformat``."""
    text = getattr(config, "pretty_text", None)
    if isinstance(text, str):
        return text
    return pprint.pformat(config_dict(config), sort_dicts=False)


def config_dict(config: Any) -> dict:
    """The config as a plain nested dict (ConfigDicts and other mappings turned into dicts)."""
    to_dict = getattr(config, "to_dict", None)
    data = to_dict() if callable(to_dict) else config
    if not isinstance(data, Mapping):
        raise TypeError(f"add_config expects a Config or a dict, got {type(config).__name__}")
    return _plain(data)


def flatten_config(config: Any, separator: str = ".") -> dict[str, Any]:
    """``{'a': {'b': 1}}`` -> ``{'a.b': 1}``: the form trackers' hyperparameter tables take."""
    flat: dict[str, Any] = {}

    def visit(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            for key, item in value.items():
                visit(f"{prefix}{separator}{key}" if prefix else str(key), item)
        else:
            flat[prefix] = value

    visit("", config_dict(config))
    return flat


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(item) for item in value)
    return value
