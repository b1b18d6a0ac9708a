"""get_config and get_model: configs and models shipped inside installed packages."""

from __future__ import annotations

import importlib
import inspect
import os
from typing import Any

from torch import nn

from treadle.config import Config
from treadle.registry import DefaultScope
from treadle.runner.checkpoint import load_checkpoint
from treadle.runner.registry import MODELS

from .metafile import find_config_entry, find_index_root, first_weights, split_package_path


def config_and_weights(cfg_path: str) -> tuple[Config, str | None]:
    """The config ``'pkg::rel/path.py'`` names and the weights its metafile entry gives (None
    when it has no entry or no weights)."""
    package, relative = split_package_path(cfg_path)
    root = find_index_root(package, required=False)
    entry = find_config_entry(root, relative) if root is not None else None
    if entry is None:
        # Base configs (_base_/...) have no metafile entry: they sit beside the index (a source
        # checkout's configs/), or where treadle.config looks (<package>/.mim/configs...).
        beside = os.path.join(root, "configs", relative) if root is not None else ""
        return Config.fromfile(beside if os.path.isfile(beside) else cfg_path), None
    return Config.fromfile(os.path.join(root, entry["Config"])), first_weights(entry)


def get_config(cfg_path: str, pretrained: bool = False) -> Config:
    """The config ``cfg_path`` (``'package::path/in/configs.py'``) of an installed package.

    Configs listed in the package's metafiles are read from where the metafile says; others
    (``_base_`` files) from ``<package>/.mim/configs`` or ``<package>/configs``. With
    ``pretrained=True`` the weights of the metafile entry are put in ``cfg.model_path``.

    Example:
        >>> cfg = get_config('treadle_toy_zoo::toy/toy-linear_4xb3_2e.py', pretrained=True)
        >>> cfg.model_path
        'toyzoo://toy-linear'
    """
    cfg, weights = config_and_weights(cfg_path)
    if pretrained:
        if weights is None:
            raise ValueError(
                f"get_config({cfg_path!r}, pretrained=True): no metafile entry of the package "
                "lists weights for this config (a 'Weights' field), so there are none to load"
            )
        cfg.model_path = weights
    return cfg


def register_package_modules(package: str) -> None:
    """Import ``package`` and, where it has one, call ``<package>.utils.register_all_modules``
    (without making its scope the process-wide default: the caller scopes the build)."""
    importlib.import_module(package)
    try:
        utils = importlib.import_module(f"{package}.utils")
    except ModuleNotFoundError as err:
        if err.name == f"{package}.utils":
            return
        raise
    register = getattr(utils, "register_all_modules", None)
    if not callable(register):
        return
    if "init_default_scope" in inspect.signature(register).parameters:
        register(init_default_scope=False)
    else:
        register()


def get_model(cfg_path: str, pretrained: bool = False, **kwargs: Any) -> nn.Module:
    """The model of the config ``cfg_path`` (``'package::path/in/configs.py'``), built in the
    package's scope; ``pretrained=True`` loads the weights its metafile lists (through
    CheckpointLoader: any path, URL or registered scheme). ``kwargs`` are default arguments of
    the build.

    Example:
        >>> model = get_model('treadle_toy_zoo::toy/toy-linear_4xb3_2e.py', pretrained=True)
        >>> type(model).__name__
        'ToyZooClassifier'
    """
    package, _ = split_package_path(cfg_path)
    register_package_modules(package)
    with DefaultScope.overwrite_default_scope(package):
        cfg = get_config(cfg_path, pretrained)
        if "model" not in cfg:
            raise KeyError(f"the config {cfg_path!r} has no 'model' key: there is nothing to build")
        if "data_preprocessor" in cfg:
            cfg.model.data_preprocessor = cfg.data_preprocessor
        model = MODELS.build(cfg.model, default_args=kwargs)
    if pretrained:
        load_checkpoint(model, cfg.model_path, map_location="cpu")
        # The Runner would otherwise call init_weights() and overwrite what was loaded.
        model._is_init = True
    return model
