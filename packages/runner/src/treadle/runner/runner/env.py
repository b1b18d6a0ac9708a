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
from collections.abc import Mapping
from typing import Any

import torch

from treadle.dist import broadcast, get_dist_info, init_dist, is_distributed
from treadle.dist.launch import check_timeout
from treadle.runner.utils.launch_error import LaunchError
from treadle.runner.utils.process_group import end_process_group_at_exit

LAUNCHERS = ("none", "pytorch", "slurm", "mpi")


# The launcher value for the program a user may name instead.
_LAUNCHER_OF_PROGRAM = {"torchrun": "pytorch", "srun": "slurm", "mpirun": "mpi"}
# How each launcher starts a whole run, as the user would type it.
_LAUNCH_COMMANDS = {
    "pytorch": "torchrun --nproc-per-node N -m treadle.runner train CONFIG --launcher pytorch",
    "slurm": "srun -n N python -m treadle.runner train CONFIG --launcher slurm",
    "mpi": "mpirun -n N python -m treadle.runner train CONFIG --launcher mpi",
}


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


def start_group(launcher: str, dist_cfg: dict | None = None) -> None:
    """Start the process group of a run launched by ``launcher`` with ``env_cfg.dist_cfg``.

    Without ``dist_cfg.backend`` the backend is the one of the device in use (nccl on CUDA,
    hccl on NPU, ..., gloo on the CPU), where MMEngine always asks for nccl. Errors say which
    config key or option to change: a GPU-only backend on a machine without GPUs, or a launcher
    whose environment variables are missing.

    Example:
        >>> start_group('pytorch', dict(backend='gloo'))  # doctest: +SKIP
    """
    from treadle.runner.device import device_count, dist_backend_for

    if dist_cfg is not None and not isinstance(dist_cfg, Mapping):
        raise TypeError(
            f"env_cfg.dist_cfg must be a dict of init_dist's arguments (backend, timeout...), got "
            f"{type(dist_cfg).__name__}: {dist_cfg!r}"
        )
    kwargs = dict(dist_cfg or {})
    if kwargs.get("timeout") is not None:
        # Seconds, as in MMEngine; unset keeps torch's default (rank 0 may prepare data for
        # minutes while the others wait). A collective that outlasts it names the late rank.
        kwargs["timeout"] = check_timeout(kwargs["timeout"], "env_cfg.dist_cfg.timeout")
    backend = kwargs.setdefault("backend", dist_backend_for())
    if isinstance(backend, str) and "nccl" in backend.lower() and device_count("cuda") == 0:
        raise LaunchError(
            f"env_cfg.dist_cfg.backend={backend!r} needs one CUDA GPU per process, and this "
            f"machine has none: use backend 'gloo' on CPUs (env_cfg=dict(dist_cfg=dict("
            f"backend='gloo')), or --cfg-options env_cfg.dist_cfg.backend=gloo), or leave "
            f"backend unset to get the one of the device in use"
        )
    try:
        init_dist(launcher, **kwargs)
        # The group is this run's: end it before the interpreter tears torch down.
        end_process_group_at_exit()
    except RuntimeError as error:
        if "environment variable" not in str(error) or launcher not in _LAUNCH_COMMANDS:
            raise
        raise LaunchError(
            f"launcher={launcher!r} (--launcher {launcher}): {error}; a whole run is launched as "
            f"`{_LAUNCH_COMMANDS[launcher]}`"
        ) from error


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
    treadle.dist (see :func:`start_group`: the backend defaults to the one of the
    device in use) unless ``launcher`` is 'none' or a group exists already. The timestamp
    (``YYYYmmdd_HHMMSS``) is rank 0's, so that every rank writes to the same log directory.

    Example:
        >>> rank, world_size, timestamp = setup_env(dict(cudnn_benchmark=False))
        >>> rank, world_size, len(timestamp)
        (0, 1, 15)
    """
    if not isinstance(env_cfg, Mapping):
        raise TypeError(f"env_cfg must be a dict, got {type(env_cfg).__name__}: {env_cfg!r}")
    if launcher not in LAUNCHERS:
        meant = _LAUNCHER_OF_PROGRAM.get(launcher)
        hint = f" (a run started by {launcher} is launcher={meant!r})" if meant else ""
        raise ValueError(f"launcher must be one of {', '.join(LAUNCHERS)}, got {launcher!r}{hint}")
    distributed = launcher != "none"
    if env_cfg.get("cudnn_benchmark"):
        torch.backends.cudnn.benchmark = True
    mp_cfg = env_cfg.get("mp_cfg") or {}
    set_multi_processing(**mp_cfg, distributed=distributed)
    if distributed and not is_distributed():
        start_group(launcher, env_cfg.get("dist_cfg"))
    rank, world_size = get_dist_info()
    stamp = torch.tensor(time.time(), dtype=torch.float64)
    if world_size > 1:
        broadcast(stamp)
    timestamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(stamp.item()))
    _raise_open_file_limit(int(env_cfg.get("resource_limit", 4096)))
    return rank, world_size, timestamp


def collect_env() -> dict[str, Any]:
    """What the log's "System environment" block reports: Python, platform, torch and its
    devices, NumPy, treadle. Under treadle.compat, MMEngine's report instead (its keys, the
    compiler and torch's build configuration included: see utils.mmengine_env).

    Example:
        >>> sorted(collect_env())[:2]
        ['CUDA available', 'Device']
    """
    from treadle.runner.utils import mmengine_env

    if mmengine_env.MMENGINE_VERSION is not None:
        # Under treadle.compat: MMEngine's report, whose keys MMEngine code reads.
        return mmengine_env.collect_mmengine_env(mmengine_env.MMENGINE_VERSION)
    import numpy as np

    from treadle.runner import __version__
    from treadle.runner.device import device_count, get_device

    device_type = get_device()
    info = {
        "sys.platform": sys.platform,
        "Python": sys.version.replace("\n", ""),
        "PyTorch": torch.__version__,
        "CUDA available": str(device_type == "cuda"),
        "Device": device_type,
        "NumPy": np.__version__,
        "treadle": __version__,
    }
    if device_type == "cuda":
        info["GPU 0"] = torch.cuda.get_device_name(0)
        info["CUDA"] = str(torch.version.cuda)
    elif device_type != "cpu":
        info["Devices"] = str(device_count(device_type))
    info["PyTorch threads"] = str(torch.get_num_threads())
    return info
