"""The process environment of a run: cuDNN, multiprocessing, threads, the distributed group,
open-file limits, and the timestamp every rank shares."""

from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import platform
import sys
import time
import warnings
from typing import Any

import torch

from treadle.dist import broadcast, get_dist_info, init_dist, is_distributed

LAUNCHERS = ("none", "pytorch", "slurm", "mpi")


def set_multi_processing(
    mp_start_method: str = "fork", opencv_num_threads: int = 0, distributed: bool = False
) -> None:
    """Set how DataLoader workers start, OpenCV's threads, and (when ``distributed``) one
    OpenMP/MKL thread per process unless the environment already says how many.

    Example:
        >>> set_multi_processing(mp_start_method='fork', distributed=False)
    """
    if platform.system() != "Windows":
        current = mp.get_start_method(allow_none=True)
        if current is not None and current != mp_start_method:
            warnings.warn(
                f"env_cfg.mp_cfg.mp_start_method={mp_start_method!r} replaces the start method "
                f"{current!r} set earlier in this process",
                UserWarning,
                stacklevel=2,
            )
        if current != mp_start_method:
            mp.set_start_method(mp_start_method, force=True)
    # Importing OpenCV only to set its threads would cost every run; it is set when installed.
    if "cv2" in sys.modules or importlib.util.find_spec("cv2") is not None:
        import cv2

        cv2.setNumThreads(opencv_num_threads)
    if distributed:
        for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            if variable not in os.environ:
                # Each process otherwise starts one thread per core and they fight.
                warnings.warn(
                    f"{variable} is not set: each process uses 1 thread; set it to tune",
                    UserWarning,
                    stacklevel=2,
                )
                os.environ[variable] = "1"


def _raise_open_file_limit(limit: int) -> None:
    # Many DataLoader workers sharing tensors through file descriptors exhaust the default
    # soft limit (pytorch/pytorch#973).
    if platform.system() == "Windows":
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(limit, soft)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if wanted != soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def setup_env(env_cfg: dict[str, Any], launcher: str = "none") -> tuple[int, int, str]:
    """Prepare the process for a run and return ``(rank, world_size, timestamp)``.

    ``env_cfg`` keys (all optional): ``cudnn_benchmark``, ``mp_cfg`` (``mp_start_method``,
    ``opencv_num_threads``), ``dist_cfg`` (``init_dist``'s ``backend``, ``timeout``...),
    ``resource_limit`` (open files, default 4096). The process group is created through
    treadle.dist unless ``launcher`` is 'none' or a group exists already. The timestamp
    (``YYYYmmdd_HHMMSS``) is rank 0's, so that every rank writes to the same log directory.

    Example:
        >>> rank, world_size, timestamp = setup_env(dict(cudnn_benchmark=False))
        >>> rank, world_size, len(timestamp)
        (0, 1, 15)
    """
    if not isinstance(env_cfg, dict):
        raise TypeError(f"env_cfg must be a dict, got {type(env_cfg).__name__}: {env_cfg!r}")
    if launcher not in LAUNCHERS:
        raise ValueError(f"launcher must be one of {', '.join(LAUNCHERS)}, got {launcher!r}")
    distributed = launcher != "none"
    if env_cfg.get("cudnn_benchmark"):
        torch.backends.cudnn.benchmark = True
    mp_cfg = env_cfg.get("mp_cfg") or {}
    set_multi_processing(**mp_cfg, distributed=distributed)
    if distributed and not is_distributed():
        init_dist(launcher, **dict(env_cfg.get("dist_cfg") or {}))
    rank, world_size = get_dist_info()
    stamp = torch.tensor(time.time(), dtype=torch.float64)
    if world_size > 1:
        broadcast(stamp)
    timestamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(stamp.item()))
    _raise_open_file_limit(int(env_cfg.get("resource_limit", 4096)))
    return rank, world_size, timestamp


def collect_env() -> dict[str, str]:
    """What the log's "System environment" block reports: Python, platform, torch and its
    devices, NumPy, treadle.

    Example:
        >>> sorted(collect_env())[:2]
        ['CUDA available', 'NumPy']
    """
    import numpy as np

    from treadle.runner import __version__

    info = {
        "sys.platform": sys.platform,
        "Python": sys.version.replace("\n", ""),
        "PyTorch": torch.__version__,
        "CUDA available": str(torch.cuda.is_available()),
        "NumPy": np.__version__,
        "treadle": __version__,
    }
    if torch.cuda.is_available():
        info["GPU 0"] = torch.cuda.get_device_name(0)
        info["CUDA"] = str(torch.version.cuda)
    info["PyTorch threads"] = str(torch.get_num_threads())
    return info
