"""Launching a run: `torchrun --nproc-per-node 2 -m treadle.runner train CONFIG --launcher
pytorch` and the same command under a stand-in for Slurm's srun (2 processes with the SLURM_*
variables srun sets, and an `scontrol` that answers the host lookup), both training the toy
model on gloo to the weights one process reaches on both ranks' batches; and the errors of a
run launched wrongly, each naming what to change."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import gloo_group
import pytest
import torch
from gloo_group import LAUNCHER_PREFIXES, LAUNCHER_VARIABLES, clean_environment, free_port
from runner_toy_model import toy_cfg
from runner_toys import on_the_cpu

from treadle.runner.runner import Runner, env
from treadle.runner.runner.env import LaunchError

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "tests" / "support"
WORLD_SIZE = 2
BATCH = 3
LR = 0.1

CONFIG = f"""
custom_imports = dict(imports=["runner_toy_model"], allow_failed_imports=False)
model = dict(type="RunnerToyModel")
experiment_name = "launch"
train_dataloader = dict(
    dataset=dict(type="RunnerToyDataset", length=12),
    sampler=dict(type="DefaultSampler", shuffle=False),
    batch_size={BATCH},
    num_workers=0,
)
train_cfg = dict(by_epoch=True, max_epochs=2)
optim_wrapper = dict(type="OptimWrapper", optimizer=dict(type="SGD", lr={LR}))
auto_scale_lr = dict(enable=False, base_batch_size={BATCH})
default_hooks = dict(
    logger=dict(type="LoggerHook", interval=1),
    checkpoint=dict(type="CheckpointHook", interval=2),
)
randomness = dict(seed=0)
env_cfg = dict(dist_cfg=dict(backend="gloo"))
"""


@pytest.fixture(autouse=True)
def no_launcher_variables(monkeypatch):
    # A distributed run sets them in os.environ when unset: keep this process's as they were.
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))
    monkeypatch.setenv("MKL_NUM_THREADS", os.environ.get("MKL_NUM_THREADS", "1"))
    for name in list(os.environ):
        if name.startswith(LAUNCHER_PREFIXES) or name in LAUNCHER_VARIABLES:
            monkeypatch.delenv(name)


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("config") / "toy_config.py"
    path.write_text(CONFIG)
    return path


def launch_environment(**variables: str) -> dict[str, str]:
    python_path = os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")]))
    return clean_environment(PYTHONPATH=python_path, OMP_NUM_THREADS="1", **variables)


def train_command(config: Path, work_dir: Path, launcher: str) -> list[str]:
    return [
        "-m",
        "treadle.runner",
        "train",
        str(config),
        "--work-dir",
        str(work_dir),
        "--launcher",
        launcher,
        "--auto-scale-lr",
        "--no-progress",
    ]


def one_process_weights(tmp_path: Path) -> dict[str, torch.Tensor]:
    """One process on both ranks' batches at once, at the learning rate auto_scale_lr gives
    2 ranks (twice the base batch size: twice the learning rate)."""
    cfg = toy_cfg(
        tmp_path / "one",
        train_dataloader=dict(
            dataset=dict(type="RunnerToyDataset", length=12),
            sampler=dict(type="DefaultSampler", shuffle=False),
            batch_size=BATCH * WORLD_SIZE,
            num_workers=0,
        ),
        train_cfg=dict(by_epoch=True, max_epochs=2),
        optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=LR * WORLD_SIZE)),
        param_scheduler=None,
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        test_dataloader=None,
        test_evaluator=None,
        test_cfg=None,
    )
    with on_the_cpu():  # as the launched ranks, which see no GPU
        runner = Runner(**cfg)
        runner.train()
    return {name: value.detach().cpu() for name, value in runner.model.state_dict().items()}


def check_trained_like_one_process(work_dir: Path, outputs: list[str], tmp_path: Path) -> None:
    checkpoint_path = work_dir / "epoch_2.pth"
    assert checkpoint_path.is_file(), "\n".join(outputs)
    checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
    assert checkpoint["optimizer"]["param_groups"][0]["lr"] == pytest.approx(LR * WORLD_SIZE)
    expected = one_process_weights(tmp_path)
    assert set(checkpoint["state_dict"]) == set(expected)
    for name, tensor in expected.items():
        torch.testing.assert_close(checkpoint["state_dict"][name], tensor, msg=name)
    (log,) = work_dir.glob("*/*.log")
    text = log.read_text()
    assert "Distributed training is not used" not in text
    assert "Epoch(train) [2][2/2]" in text  # 12 samples / (2 ranks x 3) = 2 iterations


def test_torchrun_launches_a_ddp_run_on_gloo(config, tmp_path):
    work_dir = tmp_path / "work"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        str(WORLD_SIZE),
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(free_port()),
        *train_command(config, work_dir, "pytorch"),
    ]
    process = subprocess.Popen(
        command,
        env=launch_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    outputs = gloo_group.wait_all([process])
    assert process.returncode == 0, outputs[0]
    check_trained_like_one_process(work_dir, outputs, tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in scontrol is a shell script")
def test_srun_stand_in_launches_a_ddp_run_with_launcher_slurm(config, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scontrol = bin_dir / "scontrol"
    # srun's tasks ask `scontrol show hostnames $SLURM_NODELIST` for the master host.
    scontrol.write_text('#!/bin/sh\nprintf "127.0.0.1\\n"\n')
    scontrol.chmod(scontrol.stat().st_mode | stat.S_IXUSR)
    work_dir = tmp_path / "work"
    port = free_port()
    command = [
        sys.executable,
        *train_command(config, work_dir, "slurm"),
        "--cfg-options",
        f"env_cfg.dist_cfg.port={port}",
    ]

    def srun_variables(rank: int) -> dict[str, str]:
        # What srun sets for each task of `srun -N 1 -n 2`.
        return {
            "SLURM_PROCID": str(rank),
            "SLURM_LOCALID": str(rank),
            "SLURM_NTASKS": str(WORLD_SIZE),
            "SLURM_NPROCS": str(WORLD_SIZE),
            "SLURM_NODEID": "0",
            "SLURM_NNODES": "1",
            "SLURM_NODELIST": "node01",
            "SLURM_JOB_NODELIST": "node01",
            "SLURM_TASKS_PER_NODE": str(WORLD_SIZE),
            "SLURM_JOB_ID": "4242",
            "SLURM_STEP_ID": "0",
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        }

    processes = [
        subprocess.Popen(
            command,
            env=launch_environment(**srun_variables(rank)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(WORLD_SIZE)
    ]
    outputs = gloo_group.wait_all(processes)
    assert [process.returncode for process in processes] == [0, 0], "\n".join(outputs)
    check_trained_like_one_process(work_dir, outputs, tmp_path)


# -- launched wrongly ---------------------------------------------------------------------


def test_launcher_pytorch_without_torchrun_names_the_missing_variables(tmp_path):
    with pytest.raises(LaunchError) as raised:
        Runner(**toy_cfg(tmp_path, launcher="pytorch"))
    assert str(raised.value) == (
        "launcher='pytorch' (--launcher pytorch): init_dist('pytorch') needs the environment "
        "variables RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, which torchrun "
        "(python -m torch.distributed.run) sets: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT are "
        "not set (start the program with `torchrun --nproc-per-node N ...`, or use launcher "
        "'none' for one process); a whole run is launched as `torchrun --nproc-per-node N -m "
        "treadle.runner train CONFIG --launcher pytorch`"
    )


def test_launcher_pytorch_names_only_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    with pytest.raises(LaunchError, match=r"sets: MASTER_ADDR, MASTER_PORT are not set"):
        Runner(**toy_cfg(tmp_path, launcher="pytorch"))


def test_launcher_slurm_outside_slurm_says_so(tmp_path):
    with pytest.raises(
        LaunchError,
        match=r"launcher='slurm' \(--launcher slurm\): init_dist\('slurm'\) needs the environment "
        r"variable SLURM_PROCID, which Slurm's srun sets.*`srun -n N python -m treadle.runner "
        r"train CONFIG --launcher slurm`",
    ):
        Runner(**toy_cfg(tmp_path, launcher="slurm"))


def test_launcher_mpi_outside_mpirun_says_so(tmp_path):
    with pytest.raises(
        LaunchError,
        match=r"launcher='mpi' \(--launcher mpi\): init_dist\('mpi'\) needs the environment "
        r"variable OMPI_COMM_WORLD_RANK, which Open MPI's mpirun sets.*`mpirun -n N python -m "
        r"treadle.runner train CONFIG --launcher mpi`",
    ):
        Runner(**toy_cfg(tmp_path, launcher="mpi"))


def test_unknown_launcher_lists_the_launchers(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"launcher must be one of none, pytorch, slurm, mpi, got 'torchrun' \(a run "
        r"started by torchrun is launcher='pytorch'\)",
    ):
        Runner(**toy_cfg(tmp_path, launcher="torchrun"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error of a machine without GPUs")
def test_nccl_without_gpus_says_use_gloo_and_where(tmp_path, monkeypatch):
    for name, value in dict(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    with pytest.raises(LaunchError) as raised:
        Runner(**toy_cfg(tmp_path, launcher="pytorch", env_cfg=dict(dist_cfg=dict(backend="nccl"))))
    assert str(raised.value) == (
        "env_cfg.dist_cfg.backend='nccl' needs one CUDA GPU per process, and this machine has "
        "none: use backend 'gloo' on CPUs (env_cfg=dict(dist_cfg=dict(backend='gloo')), or "
        "--cfg-options env_cfg.dist_cfg.backend=gloo), or leave backend unset to get the one of "
        "the device in use"
    )
    assert not torch.distributed.is_initialized()


def test_dist_cfg_must_be_a_dict(tmp_path, monkeypatch):
    with pytest.raises(TypeError, match=r"env_cfg.dist_cfg must be a dict .* got str: 'gloo'"):
        Runner(**toy_cfg(tmp_path, launcher="pytorch", env_cfg=dict(dist_cfg="gloo")))


def test_start_group_defaults_the_backend_to_the_devices(monkeypatch):
    calls = []
    monkeypatch.setattr(env, "init_dist", lambda launcher, **kwargs: calls.append(kwargs))
    env.start_group("pytorch", None)
    env.start_group("slurm", dict(port=29555))
    env.start_group("pytorch", dict(backend="mpi"))
    default = "nccl" if torch.cuda.is_available() else "gloo"
    assert calls == [{"backend": default}, {"backend": default, "port": 29555}, {"backend": "mpi"}]


def test_one_process_group_of_one_starts_with_the_default_backend(tmp_path, monkeypatch):
    for name, value in dict(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    try:
        runner = Runner(**toy_cfg(tmp_path, launcher="pytorch", env_cfg=dict()))
        assert torch.distributed.get_backend() == ("nccl" if torch.cuda.is_available() else "gloo")
        assert runner.distributed and runner.world_size == 1
    finally:
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


def test_the_runner_ends_the_process_group_it_started_at_exit(tmp_path):
    """A group the Runner started is destroyed at interpreter exit, before torch's own
    teardown (a gloo group left to it can abort the process); the check below is registered
    first, so it runs after the Runner's."""
    script = tmp_path / "run.py"
    script.write_text(
        "import atexit, sys, torch\n"
        f"sys.path.insert(0, {str(SUPPORT)!r})\n"
        "atexit.register(lambda: print('group at exit:', torch.distributed.is_initialized()))\n"
        "from runner_toy_model import toy_cfg\n"
        "from treadle.runner.runner import Runner\n"
        f"runner = Runner(**toy_cfg({str(tmp_path / 'work')!r}, launcher='pytorch', "
        "env_cfg=dict()))\n"
        "print('group while running:', torch.distributed.is_initialized())\n"
    )
    environment = clean_environment()
    environment.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1")
    environment["MASTER_PORT"] = str(free_port())
    result = subprocess.run(
        [sys.executable, str(script)], env=environment, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "group while running: True" in result.stdout
    assert "group at exit: False" in result.stdout
