"""The OpenMMLab model names behind ``open-mmlab://NAME``, ``openmmlab://NAME`` and
``mmcls://NAME``, and the URLs of their checkpoints.

treadle ships the lists MMEngine 0.10.7 ships (``model_lists/openmmlab.json``, ``mmcls.json``
and ``deprecated.json``: facts, name to URL, read from MMEngine's wheel), so configs that start
from ``open-mmlab://resnet50_v1c`` load as they do under MMEngine. They are read once, when a
name is first looked up. A user adds or replaces names with JSON files of the same shape in the
treadle home directory (``$TREADLE_HOME``, else ``$XDG_CACHE_HOME/treadle``, else
``~/.cache/treadle``): ``open_mmlab.json``, ``mmcls.json``, ``deprecated.json``; a value there
may also be a path relative to that directory.

``$TREADLE_OPENMMLAB_MIRROR`` (a base URL such as ``http://mirror.local/openmmlab``) replaces
``https://download.openmmlab.com`` in the URLs looked up, for clusters that reach the files
through a mirror (and tests, through a local server).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import os
from typing import Any

ENV_TREADLE_HOME = "TREADLE_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
#: The environment variable naming a mirror of OpenMMLab's download server.
ENV_OPENMMLAB_MIRROR = "TREADLE_OPENMMLAB_MIRROR"
#: Where every URL of the shipped lists starts.
OPENMMLAB_DOWNLOADS = "https://download.openmmlab.com"

# The shipped list and the user's file of each kind.
_LISTS = {
    "openmmlab": ("openmmlab.json", "open_mmlab.json"),
    "mmcls": ("mmcls.json", "mmcls.json"),
    "deprecated": ("deprecated.json", "deprecated.json"),
}


def treadle_home() -> str:
    """The treadle home directory (made if missing), where the user's model lists go.

    Example:
        >>> os.path.isdir(treadle_home())
        True
    """
    home = os.getenv(ENV_TREADLE_HOME) or os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME) or DEFAULT_CACHE_DIR, "treadle"
    )
    home = os.path.expanduser(home)
    os.makedirs(home, exist_ok=True)
    return home


def _check_list(urls: Any, where: str) -> dict[str, str]:
    if not isinstance(urls, dict):
        raise ValueError(
            f"{where} must hold a JSON object {{name: url}}, got {type(urls).__name__}"
        )
    return urls


@functools.cache
def _shipped(kind: str) -> dict[str, str]:
    # Read on first use only: importing the checkpoint package reads no file.
    resource = importlib.resources.files(__package__).joinpath("model_lists", _LISTS[kind][0])
    return _check_list(json.loads(resource.read_text(encoding="utf-8")), str(resource))


def user_list_path(kind: str) -> str:
    """The path of the user's list of ``kind`` ('openmmlab', 'mmcls' or 'deprecated').

    Example:
        >>> os.path.basename(user_list_path('openmmlab'))
        'open_mmlab.json'
    """
    return os.path.join(treadle_home(), _LISTS[kind][1])


def _user_list(kind: str) -> dict[str, str]:
    path = user_list_path(kind)
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as file:
        return _check_list(json.load(file), path)


def model_list(kind: str) -> dict[str, str]:
    """The names of ``kind`` and their URLs: the shipped list, updated by the user's.

    Example:
        >>> model_list('openmmlab')['resnet50_v1c']  # doctest: +ELLIPSIS
        'https://download.openmmlab.com/pretrain/third_party/resnet50_v1c-...pth'
    """
    return {**_shipped(kind), **_user_list(kind)}


def mirrored(url: str) -> str:
    """``url`` with OpenMMLab's download server replaced by ``$TREADLE_OPENMMLAB_MIRROR``
    when that is set.

    Example:
        >>> mirrored('https://example.com/a.pth')
        'https://example.com/a.pth'
    """
    mirror = os.getenv(ENV_OPENMMLAB_MIRROR)
    if mirror and url.startswith(OPENMMLAB_DOWNLOADS + "/"):
        return mirror.rstrip("/") + url[len(OPENMMLAB_DOWNLOADS) :]
    return url


def get_external_models() -> dict[str, str]:
    """The ``open-mmlab://`` names: MMEngine 0.10.7's list, updated by the user's
    ``open_mmlab.json``.

    Example:
        >>> 'resnet50_v1c' in get_external_models()
        True
    """
    return model_list("openmmlab")


def get_mmcls_models() -> dict[str, str]:
    """The ``mmcls://`` names: MMEngine 0.10.7's list, updated by the user's ``mmcls.json``.

    Example:
        >>> 'resnet50' in get_mmcls_models()
        True
    """
    return model_list("mmcls")


def get_deprecated_model_names() -> dict[str, str]:
    """Renamed ``open-mmlab://`` names (old: new): MMEngine 0.10.7's list, updated by the
    user's ``deprecated.json``.

    Example:
        >>> get_deprecated_model_names()['resnet50_caffe']
        'detectron/resnet50_caffe'
    """
    return model_list("deprecated")
