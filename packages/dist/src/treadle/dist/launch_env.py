"""What each launcher tells a process about its place in the job, read from the environment.

torchrun sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``
itself. Slurm (``srun``) and Open MPI (``mpirun``) set their own variables; they are translated
here into torchrun's, which ``torch.distributed.init_process_group`` reads (``env://``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

import torch

from treadle.logging.rank import ENV_VARIABLES

DEFAULT_MASTER_PORT = "29500"  # torch.distributed's own default

# Who sets each launcher's variables, for error messages.
_SETTERS = {
    "pytorch": "torchrun (python -m torch.distributed.run)",
    "slurm": "Slurm's srun",
    "mpi": "Open MPI's mpirun",
}


@dataclass(frozen=True)
class LaunchEnv:
    """A process's place in the job, and the torchrun variables that describe it."""

    rank: int
    world_size: int
    local_rank: int
    variables: dict[str, str] = field(default_factory=dict)


def accelerator_count() -> int:
    """Devices of this process's accelerator (CUDA, XPU, or a vendor's whose adapter is
    imported), through torch.accelerator where torch has it; 0 on the CPU and for MPS, which
    has no index to choose."""
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "current_accelerator"):
        current = accelerator.current_accelerator(check_available=True)
        if current is None or current.type == "mps":
            return 0
        return int(accelerator.device_count())
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _int_variable(name: str, launcher: str, default: int | None = None) -> int:
    text = os.environ.get(name)
    if text is None or not text.strip():
        if default is not None:
            return default
        raise RuntimeError(
            f"init_dist({launcher!r}) needs the environment variable {name}, which "
            f"{_SETTERS[launcher]} sets; it is not set (is this process started by that launcher?)"
        )
    try:
        return int(text)
    except ValueError:
        raise ValueError(
            f"environment variable {name}={text!r} must be an integer for init_dist({launcher!r})"
        ) from None


def _optional_int(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    return int(text) if text.isdigit() else None


# treadle.logging reads the same variables to find the rank without torch: one table for both.
# Its first three rows are torchrun's, Slurm's and Open MPI's (the fourth, PMI, has no launcher
# of init_dist).
_RANK_VARIABLES = dict(zip(("pytorch", "slurm", "mpi"), ENV_VARIABLES[:3], strict=True))


def rank_and_world_size(launcher: str) -> tuple[int | None, int | None]:
    """The ``(rank, world_size)`` the launcher's variables announce; None where unset."""
    rank_name, world_size_name = _RANK_VARIABLES[launcher]
    return _optional_int(rank_name), _optional_int(world_size_name)


def pytorch_env(rendezvous: bool = True) -> LaunchEnv:
    """torchrun's variables, as they are (``LOCAL_RANK`` defaults to ``RANK``: one machine).

    All of them are checked at once, and every missing one is named: ``RANK``, ``WORLD_SIZE``,
    and with ``rendezvous`` (an ``env://`` start, the default) ``MASTER_ADDR`` and
    ``MASTER_PORT``, which torch would otherwise ask for one at a time.
    """
    needed = ("RANK", "WORLD_SIZE", *(("MASTER_ADDR", "MASTER_PORT") if rendezvous else ()))
    missing = [name for name in needed if not os.environ.get(name, "").strip()]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise RuntimeError(
            f"init_dist('pytorch') needs the environment variables {', '.join(needed)}, which "
            f"{_SETTERS['pytorch']} sets: {', '.join(missing)} {verb} not set (start the "
            f"program with `torchrun --nproc-per-node N ...`, or use launcher 'none' for one "
            f"process)"
        )
    rank = _int_variable("RANK", "pytorch")
    world_size = _int_variable("WORLD_SIZE", "pytorch")
    local_rank = _int_variable("LOCAL_RANK", "pytorch", default=rank)
    return LaunchEnv(rank, world_size, local_rank)


def slurm_master_address(node_list: str) -> str:
    """The first host of a Slurm node list (``node[01-04]`` -> ``node01``), by ``scontrol``."""
    if shutil.which("scontrol") is None:
        raise RuntimeError(
            f"init_dist('slurm') needs `scontrol` to find the master host of "
            f"SLURM_NODELIST={node_list!r}, and it is not on PATH: run inside a Slurm job or "
            f"set MASTER_ADDR"
        )
    completed = subprocess.run(
        ["scontrol", "show", "hostnames", node_list], capture_output=True, text=True, check=False
    )
    hosts = completed.stdout.split()
    if completed.returncode != 0 or not hosts:
        raise RuntimeError(
            f"`scontrol show hostnames {node_list}` failed (exit {completed.returncode}): "
            f"{completed.stderr.strip() or completed.stdout.strip()}; set MASTER_ADDR instead"
        )
    return hosts[0]


def slurm_env(port: int | str | None = None) -> LaunchEnv:
    """Slurm's variables: ``SLURM_PROCID``, ``SLURM_NTASKS``, ``SLURM_NODELIST``,
    ``SLURM_LOCALID``, and ``SLURM_NTASKS_PER_NODE`` or ``SLURM_TASKS_PER_NODE`` with
    ``SLURM_NODEID`` for the local size.

    MASTER_PORT: ``port``, else the environment's, else 29500. MASTER_ADDR: the environment's,
    else the first host of ``SLURM_NODELIST``.
    """
    rank = _int_variable("SLURM_PROCID", "slurm")
    world_size = _int_variable("SLURM_NTASKS", "slurm")
    gpus = max(accelerator_count(), 1)
    local_rank = _int_variable("SLURM_LOCALID", "slurm", default=rank % gpus)
    variables = {
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(local_rank),
        "MASTER_PORT": str(port) if port is not None else os.environ.get("MASTER_PORT", ""),
    }
    variables["MASTER_PORT"] = variables["MASTER_PORT"] or DEFAULT_MASTER_PORT
    if os.environ.get("MASTER_ADDR"):
        variables["MASTER_ADDR"] = os.environ["MASTER_ADDR"]
    else:
        node_list = os.environ.get("SLURM_NODELIST") or os.environ.get("SLURM_JOB_NODELIST")
        if not node_list:
            raise RuntimeError(
                "init_dist('slurm') needs SLURM_NODELIST (set by Slurm's srun) or MASTER_ADDR "
                "to find the master host; neither is set"
            )
        variables["MASTER_ADDR"] = slurm_master_address(node_list)
    local_size = _optional_int("SLURM_NTASKS_PER_NODE") or slurm_tasks_on_this_node()
    if local_size is not None:
        variables["LOCAL_WORLD_SIZE"] = str(local_size)
    return LaunchEnv(rank, world_size, local_rank, variables)


def slurm_tasks_on_this_node() -> int | None:
    """The number of tasks on this node from ``SLURM_TASKS_PER_NODE`` (always set by srun, in
    a compressed form: ``'4(x2),3'`` means 4 tasks on each of the first 2 nodes, then 3) and
    ``SLURM_NODEID``; None when either is missing or unreadable."""
    layout = os.environ.get("SLURM_TASKS_PER_NODE", "").strip()
    node = _optional_int("SLURM_NODEID")
    if not layout or node is None:
        return None
    per_node: list[int] = []
    for entry in layout.split(","):
        tasks, _, repeat = entry.partition("(x")
        if not tasks.isdigit() or not (repeat == "" or repeat.rstrip(")").isdigit()):
            return None
        per_node += [int(tasks)] * (int(repeat.rstrip(")")) if repeat else 1)
    return per_node[node] if node < len(per_node) else None


def mpi_env(backend: str) -> LaunchEnv:
    """Open MPI's variables: ``OMPI_COMM_WORLD_RANK``, ``_SIZE``, ``_LOCAL_RANK``,
    ``_LOCAL_SIZE``; MASTER_ADDR must be set (except for the mpi backend, which needs no
    rendezvous), MASTER_PORT defaults to 29500."""
    rank = _int_variable("OMPI_COMM_WORLD_RANK", "mpi")
    world_size = _int_variable("OMPI_COMM_WORLD_SIZE", "mpi")
    local_rank = _int_variable("OMPI_COMM_WORLD_LOCAL_RANK", "mpi")
    if not os.environ.get("MASTER_ADDR") and backend != "mpi":
        raise RuntimeError(
            "init_dist('mpi') needs the environment variable MASTER_ADDR (the host of rank 0, "
            "e.g. `mpirun -x MASTER_ADDR=node01 ...`); it is not set"
        )
    variables = {
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(local_rank),
        "MASTER_PORT": os.environ.get("MASTER_PORT") or DEFAULT_MASTER_PORT,
    }
    local_size = _optional_int("OMPI_COMM_WORLD_LOCAL_SIZE")
    if local_size is not None:
        variables["LOCAL_WORLD_SIZE"] = str(local_size)
    return LaunchEnv(rank, world_size, local_rank, variables)
