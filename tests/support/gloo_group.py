"""Real process groups of a few local processes (gloo on 127.0.0.1) for the tests of any
package that needs one: start ``world_size`` copies of ``gloo_rank_runner.py``, each of which
initializes with treadle.dist.init_dist and runs every ``scenario_*`` function of a scenario
file, then read back what each scenario returned or raised on each rank.

Starting a group costs a second or two per process (importing torch), so tests start one group
per scenario file and ask it many questions at once.
"""

import os
import pickle
import socket
import subprocess
import sys
from pathlib import Path

import pytest

RANK_RUNNER = Path(__file__).with_name("gloo_rank_runner.py")
GROUP_TIMEOUT_S = 120

LAUNCHER_PREFIXES = ("SLURM_", "OMPI_", "PMI_")
LAUNCHER_VARIABLES = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def torchrun_variables(rank: int, world_size: int, port: int) -> dict[str, str]:
    """What torchrun sets for ``rank`` of ``world_size`` processes on this machine."""
    return {
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(rank),
        "LOCAL_WORLD_SIZE": str(world_size),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
    }


def clean_environment(*, gpus: bool = False, **variables: str) -> dict[str, str]:
    """This process's environment without any launcher's variables, plus ``variables``.

    The processes see no GPU unless ``gpus``: these groups train on the CPU, as on the machines
    without one that run the suite. On a GPU machine every rank would otherwise take one
    (a machine with one GPU puts two ranks on it), and the results would no longer be those of
    the CPU runs the tests compare them with.
    """
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(LAUNCHER_PREFIXES) and name not in LAUNCHER_VARIABLES
    }
    if not gpus:
        env["CUDA_VISIBLE_DEVICES"] = ""
    env.update(variables)
    return env


def wait_all(processes: list[subprocess.Popen], timeout: float = GROUP_TIMEOUT_S) -> list[str]:
    """Wait for every process (killing those still running after ``timeout`` seconds) and
    return their combined outputs."""
    outputs = []
    for process in processes:
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            output += "\n[killed: the group did not finish in time]"
        outputs.append(output)
    return outputs


def read_results(out_dir: Path, world_size: int, outputs: list[str]) -> dict[int, dict]:
    results = {}
    for rank in range(world_size):
        path = out_dir / f"rank{rank}.pkl"
        results[rank] = pickle.loads(path.read_bytes()) if path.exists() else {}
    results["outputs"] = outputs
    return results


def run_group(
    scenarios: Path,
    world_size: int,
    out_dir: Path,
    launcher: str = "pytorch",
    per_rank_env=None,
    init_kwargs: str = "{}",
    extra_env=None,
    gpus: bool = False,
) -> dict:
    """Start ``world_size`` rank runners for the scenario file ``scenarios`` and
    return ``{rank: {scenario: (status, value)}, "outputs": [...]}``.

    ``per_rank_env(rank, port)`` gives each rank's launcher variables (default: torchrun's);
    the ranks see the machine's GPUs only with ``gpus=True``.
    """
    port = free_port()
    per_rank_env = per_rank_env or (lambda rank, port: torchrun_variables(rank, world_size, port))
    command = [sys.executable, str(RANK_RUNNER), str(scenarios), str(out_dir), launcher]
    processes = [
        subprocess.Popen(
            [*command, init_kwargs],
            env=clean_environment(gpus=gpus, **per_rank_env(rank, port), **(extra_env or {})),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(world_size)
    ]
    return read_results(out_dir, world_size, wait_all(processes))


def scenario_value(results: dict, rank: int, name: str):
    """The value scenario ``name`` returned on ``rank``, or a failure that shows why not."""
    status, value = results[rank].get(name, (None, None))
    if status is None:
        outputs = "\n".join(results["outputs"])
        pytest.fail(f"scenario {name} did not run on rank {rank}; process output:\n{outputs}")
    if status == "error":
        pytest.fail(f"scenario {name} raised on rank {rank}:\n{value}")
    return value
