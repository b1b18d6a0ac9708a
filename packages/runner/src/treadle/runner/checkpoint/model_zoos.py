"""Checkpoints by model name: ``torchvision://``, and MMEngine's ``open-mmlab://``,
``openmmlab://``, ``mmcls://`` and ``pavi://``.

MMEngine ships JSON lists of OpenMMLab model URLs; treadle ships none (they would have to be
copied or fetched). ``open-mmlab://NAME`` and ``mmcls://NAME`` are looked up in JSON files the
user writes into the treadle home directory (``$TREADLE_HOME``, else
``$XDG_CACHE_HOME/treadle``, else ``~/.cache/treadle``): ``open_mmlab.json``, ``mmcls.json``
and ``deprecated.json``, each ``{"name": "https://..." or "relative/path.pth"}``.
"""

from __future__ import annotations

import json
import logging
import os
from collections import OrderedDict
from typing import Any

from treadle.logging import print_log
from treadle.registry.suggestions import close_matches

from .errors import UnknownModelError
from .formats import read_checkpoint_file
from .loader import CheckpointLoader
from .schemes import load_from_http

ENV_TREADLE_HOME = "TREADLE_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"


def _get_treadle_home() -> str:
    home = os.getenv(ENV_TREADLE_HOME) or os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME) or DEFAULT_CACHE_DIR, "treadle"
    )
    home = os.path.expanduser(home)
    os.makedirs(home, exist_ok=True)
    return home


def _read_model_list(name: str) -> dict[str, str]:
    path = os.path.join(_get_treadle_home(), name)
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as file:
        urls = json.load(file)
    if not isinstance(urls, dict):
        raise ValueError(f"{path} must hold a JSON object {{name: url}}, got {type(urls).__name__}")
    return urls


def get_external_models() -> dict[str, str]:
    """The ``open-mmlab://`` names: ``open_mmlab.json`` in the treadle home directory."""
    return _read_model_list("open_mmlab.json")


def get_mmcls_models() -> dict[str, str]:
    """The ``mmcls://`` names: ``mmcls.json`` in the treadle home directory."""
    return _read_model_list("mmcls.json")


def get_deprecated_model_names() -> dict[str, str]:
    """Renamed ``open-mmlab://`` names (old: new): ``deprecated.json`` in the home directory."""
    return _read_model_list("deprecated.json")


def _unknown_model(scheme: str, name: str, known: dict, list_file: str | None) -> UnknownModelError:
    close = close_matches(name, known)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    if list_file is None:
        return UnknownModelError(f"{scheme}{name} is not a known model.{hint}")
    path = os.path.join(_get_treadle_home(), list_file)
    return UnknownModelError(
        f"{scheme}{name} is not a known model.{hint} treadle ships no OpenMMLab model list: "
        f'add {{"{name}": "https://..."}} to {path}, or load the checkpoint by its https:// URL'
    )


def get_torchvision_models() -> dict[str, str]:
    """The ``torchvision://`` names of the installed torchvision and their URLs:
    ``resnet50.imagenet1k_v2`` (one set of weights), ``resnet50.default`` (torchvision's
    default) and ``resnet50`` (the first weights listed, the ones torchvision:// named before
    torchvision 0.13)."""
    try:
        import torchvision.models
    except ImportError:
        raise ImportError(
            "torchvision:// checkpoints need torchvision, which is not installed: "
            "pip install torchvision (the build that matches your torch)"
        ) from None
    urls: dict[str, str] = {}
    for model in torchvision.models.list_models(torchvision.models):
        weights = torchvision.models.get_model_weights(model)
        members = list(weights)
        if not members:
            continue
        urls[model] = members[0].url
        urls[f"{model}.default"] = weights.DEFAULT.url
        for member in members:
            urls[f"{model}.{member.name.lower()}"] = member.url
    return urls


@CheckpointLoader.register_scheme(prefixes=("modelzoo://", "torchvision://"))
def load_from_torchvision(
    filename: str, map_location: Any = None, weights_only: bool = True
) -> Any:
    """Load torchvision's weights of a model by name: ``torchvision://resnet50``,
    ``torchvision://resnet50.imagenet1k_v2``; ``modelzoo://`` is the deprecated spelling."""
    scheme, _, name = filename.partition("://")
    if scheme == "modelzoo":
        print_log(
            'The URL scheme of "modelzoo://" is deprecated, please use "torchvision://" instead',
            logger="current",
            level=logging.WARNING,
        )
    urls = get_torchvision_models()
    if name not in urls:
        raise _unknown_model("torchvision://", name, urls, None)
    return load_from_http(urls[name], map_location=map_location, weights_only=weights_only)


@CheckpointLoader.register_scheme(prefixes=("open-mmlab://", "openmmlab://"))
def load_from_openmmlab(filename: str, map_location: Any = None, weights_only: bool = True) -> Any:
    """Load an OpenMMLab model by the name the user's ``open_mmlab.json`` gives it."""
    scheme, _, name = filename.partition("://")
    scheme += "://"
    deprecated = get_deprecated_model_names()
    if name in deprecated:
        print_log(
            f"{scheme}{name} is deprecated in favor of {scheme}{deprecated[name]}",
            logger="current",
            level=logging.WARNING,
        )
        name = deprecated[name]
    urls = get_external_models()
    if name not in urls:
        raise _unknown_model(scheme, name, urls, "open_mmlab.json")
    url = urls[name]
    if url.startswith(("http://", "https://")):
        return load_from_http(url, map_location=map_location, weights_only=weights_only)
    path = os.path.join(_get_treadle_home(), url)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            2, f"No such file or directory ({scheme}{name} in open_mmlab.json)", path
        )
    return read_checkpoint_file(path, map_location, weights_only, filename)


def _process_mmcls_checkpoint(checkpoint: dict) -> dict:
    # mmcls:// names classifiers whose backbone is what a downstream model loads.
    state_dict = checkpoint.get("state_dict", checkpoint)
    backbone = OrderedDict(
        (key[len("backbone.") :], value)
        for key, value in state_dict.items()
        if key.startswith("backbone.")
    )
    return {"state_dict": backbone}


@CheckpointLoader.register_scheme(prefixes="mmcls://")
def load_from_mmcls(filename: str, map_location: Any = None, weights_only: bool = True) -> Any:
    """Load the backbone of an mmcls classifier by the name the user's ``mmcls.json`` gives."""
    name = filename[len("mmcls://") :]
    urls = get_mmcls_models()
    if name not in urls:
        raise _unknown_model("mmcls://", name, urls, "mmcls.json")
    checkpoint = load_from_http(urls[name], map_location=map_location, weights_only=weights_only)
    return _process_mmcls_checkpoint(checkpoint)


@CheckpointLoader.register_scheme(prefixes="pavi://")
def load_from_pavi(filename: str, map_location: Any = None) -> Any:
    """pavi:// (OpenMMLab's internal model cloud) is not supported."""
    raise NotImplementedError(
        f"cannot load {filename!r}: pavi:// (OpenMMLab's internal model cloud) is not supported "
        "by treadle; download the checkpoint and load its local path or URL"
    )
