"""A fingerprint of a run's config, saved in its checkpoints, that tells whether two runs are
the same command.

It hashes the config without the keys that say where and how a run is launched and named rather
than what it trains (``work_dir``, ``resume``, ``load_from``, ``launcher``,
``experiment_name``): the command run again after a
preemption, or in a copied work dir, gets the same fingerprint, and a changed learning rate or
schedule gets another. Values that are Python objects (a class or function in a lazy config)
count by their qualified name, never by their address, so the fingerprint is the same in every
process.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

# Where and how the run is launched and named, not what it trains.
VOLATILE_KEYS = frozenset({"work_dir", "resume", "load_from", "launcher", "experiment_name"})
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _plain(cfg: Any) -> dict[str, Any]:
    to_dict = getattr(cfg, "to_dict", None)
    plain = to_dict() if callable(to_dict) else dict(cfg)
    return {key: value for key, value in plain.items() if key not in VOLATILE_KEYS}


def _name_of(value: Any) -> str:
    qualname = getattr(value, "__qualname__", None)
    if qualname is not None:
        return f"{getattr(value, '__module__', '')}.{qualname}"
    return _ADDRESS.sub("", repr(value))


def _canonical(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return _name_of(value)


def config_fingerprint(cfg: Any) -> str | None:
    """A short hash of ``cfg`` (a Config or dict) without its launch keys; None for an empty
    config (a Runner built from arguments alone), which identifies no run.

    Example:
        >>> config_fingerprint(dict(work_dir='a', lr=0.1)) == config_fingerprint(
        ...     dict(work_dir='b', lr=0.1))
        True
    """
    if cfg is None:
        return None
    plain = _plain(cfg)
    if not plain:
        return None
    text = json.dumps(_canonical(plain), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _flatten(value: Any, prefix: str, into: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else key, into)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}.{index}", into)
    else:
        into[prefix] = json.dumps(value, sort_keys=True)


def config_items(cfg: Any) -> dict[str, str]:
    """Every leaf of ``cfg`` (without its launch keys) as ``{'dotted.key': 'json value'}``, the
    values in the form the fingerprint hashes: what tells two configs' differences apart.

    Example:
        >>> config_items(dict(work_dir='a', optim=dict(lr=0.1), hooks=[dict(type='A')]))
        {'optim.lr': '0.1', 'hooks.0.type': '"A"'}
    """
    items: dict[str, str] = {}
    if cfg is not None:
        _flatten(_canonical(_plain(cfg)), "", items)
    return items
