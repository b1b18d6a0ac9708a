"""The environment report of MMEngine's ``collect_env``, for code run under treadle.compat.

treadle's own report (``treadle.runner.runner.env.collect_env``) is short: the versions and the
device a run needs in its log. MMEngine's holds more (compiler, CUDA toolkit, torch's build
configuration) under its own keys, with ``'CUDA available'`` a bool; code written for MMEngine
reads those keys. While treadle.compat is installed, :data:`MMENGINE_VERSION` holds the MMEngine
version it stands for and ``collect_env`` returns this report instead.

Importing this module imports neither torch nor numpy (treadle.compat sets the switch at
install); a report does.
"""

from __future__ import annotations

import contextlib
import os.path as osp
import subprocess
import sys
import sysconfig
from collections import defaultdict

#: The MMEngine version treadle.compat stands for while installed; None otherwise.
MMENGINE_VERSION: str | None = None


def _compiler() -> str:
    # The first line of `CC --version` for the compiler Python was built with; 'n/a' without one.
    cc = sysconfig.get_config_var("CC")
    if not cc:
        return "n/a"
    try:
        output = subprocess.check_output(
            [osp.basename(cc.split()[0]), "--version"], stderr=subprocess.DEVNULL
        )
    except (OSError, subprocess.CalledProcessError):
        return "n/a"
    return output.decode("utf-8", "replace").partition("\n")[0].strip()


def _cuda_toolkit(info: dict[str, object]) -> None:
    from torch.utils.cpp_extension import CUDA_HOME  # only with CUDA: slow to import

    info["CUDA_HOME"] = CUDA_HOME
    if CUDA_HOME is None or not osp.isdir(CUDA_HOME):
        return
    try:
        output = subprocess.check_output([osp.join(CUDA_HOME, "bin", "nvcc"), "-V"])
    except (OSError, subprocess.CalledProcessError):
        info["NVCC"] = "Not Available"
        return
    text = output.decode("utf-8", "replace").strip()
    info["NVCC"] = text[text.rfind("Cuda compilation tools") : text.rfind("Build ")].strip()


def collect_mmengine_env(version: str) -> dict[str, object]:
    """What MMEngine's ``collect_env`` reports, in its order and under its keys, ``version``
    as ``'MMEngine'``.

    Example:
        >>> info = collect_mmengine_env('0.10.7')
        >>> info['MMEngine'], info['CUDA available'] in (True, False)
        ('0.10.7', True)
        >>> 'PyTorch compiling details' in info
        True
    """
    import numpy as np
    import torch

    cuda = torch.cuda.is_available()
    info: dict[str, object] = {
        "sys.platform": sys.platform,
        "Python": sys.version.replace("\n", ""),
        "CUDA available": cuda,
        "numpy_random_seed": np.random.get_state()[1][0],
    }
    if cuda:
        devices: dict[str, list[str]] = defaultdict(list)
        for index in range(torch.cuda.device_count()):
            devices[torch.cuda.get_device_name(index)].append(str(index))
        for name, indices in devices.items():
            info["GPU " + ",".join(indices)] = name
        _cuda_toolkit(info)
    info["GCC"] = _compiler()
    info["PyTorch"] = torch.__version__
    info["PyTorch compiling details"] = torch.__config__.show()
    for key, module in (("TorchVision", "torchvision"), ("OpenCV", "cv2")):
        with contextlib.suppress(ImportError):  # optional: reported where installed
            info[key] = __import__(module).__version__
    info["MMEngine"] = version
    return info


__all__ = ["MMENGINE_VERSION", "collect_mmengine_env"]
