"""Checkpoints by model name: ``torchvision://``, and MMEngine's ``open-mmlab://``,
``openmmlab://``, ``mmcls://`` and ``pavi://``.

The OpenMMLab names come from the lists treadle ships (MMEngine 0.10.7's) and the user's own,
see :mod:`.openmmlab_models`; their checkpoints are downloaded into torch.hub's cache once.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections import OrderedDict
from typing import Any

from treadle.logging import print_log
from treadle.registry.suggestions import close_matches

from .errors import UnknownModelError
from .formats import read_checkpoint_file
from .loader import CheckpointLoader
from .openmmlab_models import (
    get_deprecated_model_names,
    get_external_models,
    get_mmcls_models,
    mirrored,
    treadle_home,
    user_list_path,
)
from .schemes import load_from_http


def _unknown_model(scheme: str, name: str, known: dict, kind: str | None) -> UnknownModelError:
    close = close_matches(name, known)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    if kind is None:
        return UnknownModelError(f"{scheme}{name} is not a known model.{hint}")
    path = user_list_path(kind)
    return UnknownModelError(
        f"{scheme}{name} is not a known model.{hint} It is in neither MMEngine 0.10.7's list "
        f'that treadle ships nor {path}: add {{"{name}": "https://..."}} to {path}, or load the '
        "checkpoint by its https:// URL"
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
    """Load an OpenMMLab model by name (``open-mmlab://resnet50_v1c``): MMEngine 0.10.7's list
    or the user's ``open_mmlab.json``; a renamed name warns and loads the new one."""
    scheme, _, name = filename.partition("://")
    scheme += "://"
    deprecated = get_deprecated_model_names()
    if name in deprecated:
        message = f"{scheme}{name} is deprecated in favor of {scheme}{deprecated[name]}"
        # MMEngine's DeprecationWarning, and a line in the log, where users look.
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        print_log(message, logger="current", level=logging.WARNING)
        name = deprecated[name]
    urls = get_external_models()
    if name not in urls:
        raise _unknown_model(scheme, name, urls, "openmmlab")
    url = urls[name]
    if url.startswith(("http://", "https://")):
        return load_from_http(mirrored(url), map_location=map_location, weights_only=weights_only)
    path = os.path.join(treadle_home(), url)
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
    """Load the backbone of an mmcls classifier by name (``mmcls://resnet50``): MMEngine
    0.10.7's list or the user's ``mmcls.json``."""
    name = filename[len("mmcls://") :]
    urls = get_mmcls_models()
    if name not in urls:
        raise _unknown_model("mmcls://", name, urls, "mmcls")
    checkpoint = load_from_http(
        mirrored(urls[name]), map_location=map_location, weights_only=weights_only
    )
    return _process_mmcls_checkpoint(checkpoint)


@CheckpointLoader.register_scheme(prefixes="pavi://")
def load_from_pavi(filename: str, map_location: Any = None) -> Any:
    """pavi:// (OpenMMLab's internal model cloud) is not supported."""
    raise NotImplementedError(
        f"cannot load {filename!r}: pavi:// (OpenMMLab's internal model cloud) is not supported "
        "by treadle; download the checkpoint and load its local path or URL"
    )
