"""Where an inferencer's config comes from: a file, a dict, a ``pkg::`` config or model name, a
model name in the scope's metafile, or the checkpoint itself."""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import Any

from treadle.config import Config, ConfigDict
from treadle.runner.hub.hub import config_and_weights
from treadle.runner.hub.metafile import find_index_root, find_model, first_weights

CONFIG_SUFFIXES = (".py", ".json", ".yaml", ".yml")


def model_from_metafile(scope: str, name: str) -> tuple[Config, str | None]:
    """The config and weights of the model ``name`` (a Name or an Alias) in ``scope``'s
    metafiles."""
    root = find_index_root(scope)
    entry = find_model(root, name, scope)
    return Config.fromfile(os.path.join(root, entry["Config"])), first_weights(entry)


def resolve_model(
    model: Any, weights: str | None, scope: str | None, default_scope: str | None = None
) -> tuple[Any, str | None, str | None]:
    """``(cfg, weights, scope)`` for what a user passed as ``model``; ``weights`` given by the
    user win over a metafile's. The scope is the one given, else the package of a
    ``'pkg::...'`` model, else ``default_scope``."""
    found: str | None = None
    if isinstance(model, str) and "::" in model and scope is None:
        scope = model.partition("::")[0]
    if scope is None:
        scope = default_scope
    if isinstance(model, str):
        if os.path.isfile(model):
            cfg = Config.fromfile(model)
        elif "::" in model:
            package, _, rest = model.partition("::")
            if rest.endswith(CONFIG_SUFFIXES):
                cfg, found = config_and_weights(model)
            else:
                cfg, found = model_from_metafile(package, rest)
        elif model.endswith(CONFIG_SUFFIXES):
            raise FileNotFoundError(f"the config file {model!r} does not exist")
        else:
            if scope is None:
                raise ValueError(
                    f"model={model!r} is not a config file, so it must be a model name from a "
                    "package's metafile: pass scope='<package>', or write "
                    f"model='<package>::{model}'"
                )
            cfg, found = model_from_metafile(scope, model)
    elif isinstance(model, (Config, ConfigDict)):
        cfg = copy.deepcopy(model)
    elif isinstance(model, Mapping):
        cfg = ConfigDict(copy.deepcopy(dict(model)))
    elif model is None:
        if weights is None:
            raise ValueError(
                "model=None: then weights must be given, a checkpoint saved by the Runner "
                "(its meta holds the config of the run)"
            )
        cfg = ConfigDict()
    else:
        raise TypeError(
            "model must be a config file path, a model name, a Config or a dict, got "
            f"{type(model).__name__}: {model!r}"
        )
    return cfg, weights if weights is not None else found, scope


def config_text_of(checkpoint: Any, weights: str) -> str:
    """The config text a Runner checkpoint holds (its message hub's runtime info, as MMEngine
    writes, or its meta, as both write)."""
    if not isinstance(checkpoint, Mapping):
        raise ValueError(
            f"the checkpoint {weights!r} holds a {type(checkpoint).__name__}, not a dict"
        )
    hub = checkpoint.get("message_hub")
    runtime_info = hub.get("runtime_info") if isinstance(hub, Mapping) else None
    if isinstance(runtime_info, Mapping) and runtime_info.get("cfg"):
        return runtime_info["cfg"]
    meta = checkpoint.get("meta")
    if isinstance(meta, Mapping) and meta.get("cfg"):
        return meta["cfg"]
    raise ValueError(
        f"model=None, but the checkpoint {weights!r} holds no config (neither "
        "message_hub.runtime_info.cfg nor meta.cfg): pass the config as model="
    )
