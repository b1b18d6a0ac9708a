"""``mmengine.config.utils``'s data (the table of OpenMMLab toolboxes, Python's install prefixes),
its ``'pkg::path'`` splitter and its lookups of a package's configs through MIM's files.

treadle.config resolves ``'mmdet::path/cfg.py'`` for any installed package without a table
(treadle.config.package_path); these are MMEngine's data, given at its paths for code and tests
that read them (and for ``mmengine.infer.infer`` and ``mmengine.registry.registry``, which
import the table too).
"""

from __future__ import annotations

import os
import re
import sys

#: Where this Python is installed, and the system Python's library prefix: MMEngine's pure-Python
#: config loader uses them to tell built-in modules from others; here they are its data only.
PYTHON_ROOT_DIR = os.path.dirname(os.path.dirname(sys.executable))
SYSTEM_PYTHON_PREFIX = "/usr/lib/python"

#: The import name of each OpenMMLab toolbox MMEngine knows, to its pip package name.
MODULE2PACKAGE: dict[str, str] = {
    "mmcls": "mmcls",
    "mmdet": "mmdet",
    "mmdet3d": "mmdet3d",
    "mmseg": "mmsegmentation",
    "mmaction": "mmaction2",
    "mmtrack": "mmtrack",
    "mmpose": "mmpose",
    "mmedit": "mmedit",
    "mmocr": "mmocr",
    "mmgen": "mmgen",
    "mmfewshot": "mmfewshot",
    "mmrazor": "mmrazor",
    "mmflow": "mmflow",
    "mmhuman3d": "mmhuman3d",
    "mmrotate": "mmrotate",
    "mmselfsup": "mmselfsup",
    "mmyolo": "mmyolo",
    "mmpretrain": "mmpretrain",
    "mmagic": "mmagic",
}

#: MMEngine's older name for :data:`MODULE2PACKAGE` (the same dict, as there).
PKG2PROJECT = MODULE2PACKAGE

# MMEngine's test of a package path: a word, '::', then at least one folder level.
_PACKAGE_PATH = re.compile(r"\w*::\w*/\w*")


def _get_package_and_cfg_path(cfg_path: str) -> tuple[str, str]:
    """Split ``'mmdet::faster_rcnn/cfg.py'`` into the pip package (``'mmdet'``; ``mmseg`` gives
    ``'mmsegmentation'``) and the config path inside it.

    Raises ValueError for a path without ``pkg::folder/`` or with several ``::``, and
    AssertionError (as MMEngine) for a package not in :data:`MODULE2PACKAGE`.

    Example:
        >>> _get_package_and_cfg_path('mmseg::pspnet/pspnet_r50.py')
        ('mmsegmentation', 'pspnet/pspnet_r50.py')
    """
    if _PACKAGE_PATH.match(cfg_path) is None:
        raise ValueError(
            f"{cfg_path!r} is no package config path: write the package and the config path "
            "inside it, like `mmdet::faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py`"
        )
    parts = cfg_path.split("::")
    if len(parts) > 2:
        raise ValueError(
            f"`::` should only be used to separate package and config name, but found multiple "
            f"`::` in {cfg_path}"
        )
    module, path = parts
    if module not in MODULE2PACKAGE:
        known = ", ".join(sorted(MODULE2PACKAGE))
        raise AssertionError(f"mmengine does not support to load {module} config (known: {known})")
    return MODULE2PACKAGE[module], path


def _check_file_exist(path: str, what: str) -> str:
    if not os.path.isfile(path):
        # MMEngine's check_file_exist phrase, then what was looked for.
        raise FileNotFoundError(f'file "{path}" does not exist ({what})')
    return path


def _get_cfg_metainfo(package_path: str, cfg_path: str) -> dict:
    """The model entry of the config ``cfg_path`` (``'faster_rcnn/cfg_name'``, no ``.py``)
    among the metafiles that ``PACKAGE/.mim/model-index.yml`` imports, as MIM records them.

    The first entry of a config wins (a config with several checkpoints is listed once per
    checkpoint); entries without ``Config`` are skipped with a warning. ValueError (as
    MMEngine) when no metafile lists the config: it is then a base config, found by path.

    Example:
        >>> _get_cfg_metainfo('/site-packages/mmdet', 'retinanet/r50.py')  # doctest: +SKIP
        {'Name': 'r50', 'Config': 'configs/retinanet/r50.py', ...}
    """
    import warnings

    from treadle.fileio import load

    mim = os.path.join(package_path, ".mim")
    index = load(_check_file_exist(os.path.join(mim, "model-index.yml"), "MIM's model index"))
    models: dict[str, dict] = {}
    for metafile in index.get("Import", ()) if isinstance(index, dict) else ():
        meta = load(os.path.join(mim, metafile))
        for model in meta.get("Models", ()) if isinstance(meta, dict) else ():
            if "Config" not in model:
                warnings.warn(
                    f"{metafile}: a model entry has no `Config` and is skipped: {model}",
                    stacklevel=2,
                )
                continue
            # 'configs/retinanet/x.py' -> 'retinanet/x.py': the path inside the configs folder.
            models.setdefault(model["Config"].partition("/")[-1], model)
    if cfg_path not in models:
        raise ValueError(
            f"Expected configs: {sorted(models)}, but got {cfg_path}: no metafile of "
            f"{package_path} lists it"
        )
    return models[cfg_path]


def _get_external_cfg_path(package_path: str, cfg_file: str) -> str:
    """The path of the config ``cfg_file`` (``'retinanet/retinanet_r50_fpn_1x_coco.py'``) of
    an installed OpenMMLab package, found through its MIM metafiles (``_get_cfg_metainfo``).
    As in MMEngine, everything from the first ``.`` of ``cfg_file`` is cut before the lookup,
    while metafiles list configs with their ``.py``: those are not found this way (ValueError),
    and MMEngine's ``Config._get_cfg_path`` then takes ``.mim/configs/NAME``
    (``_get_external_cfg_base_path``). Kept so, because the metafile's path can name a folder
    that the installed package does not have.

    Raises ValueError where no metafile lists it, FileNotFoundError where the listed file is
    missing.
    """
    model = _get_cfg_metainfo(package_path, cfg_file.split(".")[0])
    return _check_file_exist(os.path.join(package_path, model["Config"]), f"config of {cfg_file}")


def _get_external_cfg_base_path(package_path: str, cfg_name: str) -> str:
    """``PACKAGE/.mim/configs/CFG_NAME``: where MIM installs a package's (base) configs.
    FileNotFoundError if it is not there.

    Example:
        >>> _get_external_cfg_base_path('/site-packages/mmdet', '_base_/a.py')  # doctest: +SKIP
        '/site-packages/mmdet/.mim/configs/_base_/a.py'
    """
    path = os.path.join(package_path, ".mim", "configs", cfg_name)
    return _check_file_exist(path, f"base config {cfg_name} of the package at {package_path}")
