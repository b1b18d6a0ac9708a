"""``mmengine.config.utils``'s data (the table of OpenMMLab toolboxes, Python's install prefixes)
and its ``'pkg::path'`` splitter.

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
