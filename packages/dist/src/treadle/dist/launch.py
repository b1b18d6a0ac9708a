"""Starting the process group: ``init_dist`` for torchrun, Slurm and Open MPI, and
``infer_launcher`` to tell which one started this process.

Calling ``init_dist`` again when ``torch.distributed`` is already initialized warns and does
nothing when it asks for the group that exists (same backend, rank and world size), and raises
RuntimeError otherwise: silently keeping a group other than the one asked for would train with
the wrong processes.
"""

from __future__ import annotations

import datetime
import importlib
import math
import os
import warnings
from typing import Any

import torch
import torch.distributed as torch_dist
import torch.multiprocessing as mp

from .elastic_store import elastic_group_store
from .info import get_backend, get_rank, get_world_size, is_distributed
from .launch_env import (
    LaunchEnv,
    accelerator_count,
    mpi_env,
    pytorch_env,
    rank_and_world_size,
    slurm_env,
)

LAUNCHERS = ("pytorch", "slurm", "mpi")
INIT_BACKENDS = ("torch", "deepspeed", "colossalai")
# Backends MMEngine and torch know; backends registered with torch.distributed.Backend are
# accepted too.
KNOWN_BACKENDS = ("nccl", "gloo", "mpi", "ucc", "xccl", "hccl", "cncl", "mccl", "smddp")
_GPU_BACKENDS = ("nccl", "smddp")


def infer_launcher() -> str:
    """Return the launcher that started this process, from its environment: 'pytorch'
    (``WORLD_SIZE``), 'slurm' (``SLURM_NTASKS``), 'mpi' (``OMPI_COMM_WORLD_LOCAL_RANK``) or
    'none'.

    Example:
        >>> launcher = infer_launcher()
        >>> if launcher != "none":
        ...     init_dist(launcher, backend="nccl")
    """
    if "WORLD_SIZE" in os.environ:
        return "pytorch"
    if "SLURM_NTASKS" in os.environ:
        return "slurm"
    if "OMPI_COMM_WORLD_LOCAL_RANK" in os.environ:
        return "mpi"
    return "none"


def accepted_backends() -> tuple[str, ...]:
    registered = getattr(torch_dist.Backend, "backend_list", [])
    extra = [name for name in registered if name not in KNOWN_BACKENDS and name != "undefined"]
    return (*KNOWN_BACKENDS, *extra)


def _check_choice(value: Any, accepted: tuple[str, ...], what: str) -> None:
    if value not in accepted:
        raise ValueError(f"unknown {what} {value!r}: use one of {', '.join(map(repr, accepted))}")


def _check_backend(backend: Any) -> None:
    accepted = accepted_backends()
    # torch also takes one backend per device type: 'cpu:gloo,cuda:nccl'.
    parts = backend.split(",") if isinstance(backend, str) else [backend]
    for part in parts:
        name = part.split(":")[-1].strip().lower() if isinstance(part, str) else part
        if name not in accepted:
            raise ValueError(
                f"unknown backend {backend!r}: use one of {', '.join(map(repr, accepted))}, or "
                f"one per device type such as 'cpu:gloo,cuda:nccl'"
            )


def _already_initialized(launcher: str, backend: str) -> bool:
    """True (with a warning) when the existing group is the one asked for; raises when not."""
    if not is_distributed():
        return False
    current = (get_backend() or "", get_rank(), get_world_size())
    rank, world_size = rank_and_world_size(launcher)
    if current == (backend.lower(), rank, world_size):
        warnings.warn(
            f"init_dist({launcher!r}, backend={backend!r}) does nothing: torch.distributed is "
            f"already initialized with that backend, rank and world size",
            stacklevel=3,
        )
        return True
    raise RuntimeError(
        f"torch.distributed is already initialized (backend {current[0]!r}, rank {current[1]} "
        f"of {current[2]}), and init_dist({launcher!r}, backend={backend!r}) asks for backend "
        f"{backend!r}, rank {rank} of {world_size}: call torch.distributed.destroy_process_group()"
        f" before starting another group"
    )


def _set_current_device(index: int) -> None:
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "set_device_index"):
        accelerator.set_device_index(index)
    else:
        torch.cuda.set_device(index)


def _gpu_for(local_rank: int, backend: str) -> int | None:
    """The accelerator device this process should drive (its local rank), None without one;
    raises when the backend needs a CUDA GPU that is not there."""
    needs_gpu = any(name in backend.lower() for name in _GPU_BACKENDS)
    if needs_gpu:
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    else:
        gpus = accelerator_count()
    if local_rank < gpus:
        return local_rank
    if needs_gpu:
        raise RuntimeError(
            f"backend {backend!r} needs one CUDA GPU per process, but this process has local "
            f"rank {local_rank} and torch sees {gpus} GPU(s); use backend='gloo' without GPUs"
        )
    # gloo on a CPU machine, or more processes than GPUs: the current device stays as it is.
    return None


def _import_for(init_backend: str) -> Any:
    try:
        return importlib.import_module(init_backend)
    except ImportError as error:
        raise ImportError(
            f"init_backend={init_backend!r} needs the {init_backend} package: "
            f"pip install {init_backend}"
        ) from error


def _start_group(launcher: str, backend: str, library: Any, **kwargs: Any) -> None:
    """Create the group with torch, or with ``library`` (deepspeed or colossalai) when given."""
    if library is None:
        torch_dist.init_process_group(backend=backend, **kwargs)
    elif library.__name__ == "deepspeed":
        library.init_distributed(dist_backend=backend, **kwargs)
    elif launcher == "slurm":
        library.launch_from_slurm(
            backend=backend,
            host=os.environ["MASTER_ADDR"],
            port=os.environ["MASTER_PORT"],
            **kwargs,
        )
    else:
        library.launch_from_torch(backend=backend, **kwargs)


def check_timeout(timeout: Any, key: str = "timeout") -> datetime.timedelta:
    """``timeout`` (a number of seconds, or a timedelta) as the timedelta torch takes; raises
    an error naming ``key`` for anything else, zero, a negative, an infinite or a NaN value.

    Example:
        >>> check_timeout(1800)
        datetime.timedelta(seconds=1800)
    """
    seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else timeout
    if isinstance(seconds, bool):
        # MMEngine reads a bool as 0 or 1 seconds: accepted as it is, but said.
        warnings.warn(
            f"{key}={timeout!r} is read as {int(seconds)} s, as MMEngine reads it; give a number "
            "of seconds (e.g. timeout=1800)",
            stacklevel=3,
        )
        seconds = int(seconds)
    if not isinstance(seconds, (int, float)):
        # "must be provided as timeout in seconds": MMEngine's phrase for the same mistake.
        raise TypeError(
            f"{key} is a number of seconds (e.g. timeout=1800), got {type(timeout).__name__}: "
            f"{timeout!r}; it must be provided as timeout in seconds"
        )
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(
            f"{key} must be a positive, finite number of seconds (e.g. timeout=1800; leave it "
            f"unset for torch's default), got {timeout!r}"
        )
    return datetime.timedelta(seconds=seconds)


def init_dist(
    launcher: str, backend: str = "nccl", init_backend: str = "torch", **kwargs: Any
) -> None:
    """Initialize ``torch.distributed`` for a process started by ``launcher``.

    ``launcher``: 'pytorch' (torchrun), 'slurm' (srun; ``port=`` sets MASTER_PORT, MASTER_ADDR
    comes from ``scontrol show hostnames $SLURM_NODELIST`` unless set) or 'mpi' (mpirun; needs
    MASTER_ADDR). ``backend``: 'nccl', 'gloo', 'mpi', ... ``init_backend``: 'torch',
    'deepspeed' or 'colossalai', the library that creates the group. ``timeout`` is in seconds;
    other keyword arguments go to ``torch.distributed.init_process_group``.

    The launcher's variables are translated into torchrun's (``RANK``, ``WORLD_SIZE``,
    ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``) in ``os.environ``, and the process's GPU
    (its local rank) becomes the current CUDA device when there is one.

    Example:
        >>> # torchrun --nproc_per_node 8 train.py
        >>> init_dist("pytorch", backend="nccl", timeout=1800)
        >>> get_dist_info()
        (3, 8)
    """
    _check_choice(launcher, LAUNCHERS, "launcher")
    _check_backend(backend)
    _check_choice(init_backend, INIT_BACKENDS, "init_backend")
    if _already_initialized(launcher, backend):
        return

    if kwargs.get("timeout") is not None:
        kwargs["timeout"] = check_timeout(kwargs["timeout"])

    # Everything is checked first: an error leaves the process untouched. Open MPI's launch
    # always goes through torch, as in MMEngine.
    use_library = init_backend != "torch" and launcher != "mpi"
    library = _import_for(init_backend) if use_library else None
    if launcher == "slurm":
        env: LaunchEnv = slurm_env(kwargs.pop("port", None))
    elif launcher == "mpi":
        if backend == "smddp":
            _import_smddp()
        env = mpi_env(backend)
    else:
        # An explicit init_method other than env:// needs no MASTER_ADDR/MASTER_PORT.
        init_method = kwargs.get("init_method")
        env = pytorch_env(rendezvous=init_method in (None, "env://"))
    gpu = _gpu_for(env.local_rank, backend)

    # Data loader workers forked after CUDA is initialized crash: spawn them, as MMEngine does.
    if mp.get_start_method(allow_none=True) is None:
        mp.set_start_method("spawn")
    os.environ.update(env.variables)
    if gpu is not None:
        _set_current_device(gpu)
    if library is None and launcher == "pytorch":  # torchrun's restarts: a fresh store each
        kwargs.update(elastic_group_store(kwargs))
    _start_group(launcher, backend, library, **kwargs)


def _import_smddp() -> None:
    try:
        importlib.import_module("smdistributed.dataparallel.torch.torch_smddp")
    except ImportError as error:
        raise ImportError(
            "backend='smddp' needs smdistributed, which Amazon SageMaker's deep learning "
            "containers provide"
        ) from error
