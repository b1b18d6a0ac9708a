"""init_dist's checks and the launchers' variables, in this process: every case here fails
before a process group would be created (real groups are in test_launchers.py)."""

import stat
import sys

import pytest
import torch
import torch.distributed
import torch.multiprocessing

from treadle.dist import infer_launcher, init_dist


@pytest.fixture(autouse=True)
def process_left_untouched():
    start_method = torch.multiprocessing.get_start_method(allow_none=True)
    yield
    assert not torch.distributed.is_initialized()
    # init_dist checks everything before it sets the start method of subprocesses.
    assert torch.multiprocessing.get_start_method(allow_none=True) == start_method


@pytest.mark.parametrize(
    ("variables", "launcher"),
    [
        ({}, "none"),
        ({"WORLD_SIZE": "2", "RANK": "0"}, "pytorch"),
        ({"SLURM_NTASKS": "4", "SLURM_PROCID": "1"}, "slurm"),
        ({"OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}, "mpi"),
        # torchrun inside a Slurm allocation: torchrun's variables win.
        ({"WORLD_SIZE": "2", "SLURM_NTASKS": "1"}, "pytorch"),
    ],
)
def test_infer_launcher(monkeypatch, variables, launcher):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert infer_launcher() == launcher


def test_unknown_launcher_lists_the_accepted_ones():
    with pytest.raises(
        ValueError, match="unknown launcher 'torchrun': use one of 'pytorch', 'slurm', 'mpi'"
    ):
        init_dist("torchrun", backend="gloo")
    with pytest.raises(ValueError, match="unknown launcher 'none'"):
        init_dist("none")


@pytest.mark.parametrize("backend", ["glooo", "NCCL2", "cpu:gloo,cuda:nccx", None])
def test_unknown_backend_lists_the_accepted_ones(backend):
    with pytest.raises(ValueError, match=r"unknown backend .*use one of 'nccl', 'gloo', 'mpi'"):
        init_dist("pytorch", backend=backend)


def test_unknown_init_backend():
    with pytest.raises(
        ValueError, match="unknown init_backend 'horovod': use one of 'torch', 'deepspeed'"
    ):
        init_dist("pytorch", backend="gloo", init_backend="horovod")


def test_timeout_is_seconds():
    with pytest.raises(TypeError, match=r"timeout is a number of seconds \(e.g. timeout=1800\)"):
        init_dist("pytorch", backend="gloo", timeout="30m")


@pytest.mark.parametrize("backend", ["gloo", "cpu:gloo,cuda:nccl"])
def test_pytorch_launcher_needs_torchruns_variables(monkeypatch, backend):
    with pytest.raises(
        RuntimeError,
        match=r"init_dist\('pytorch'\) needs the environment variables RANK, WORLD_SIZE, "
        r"MASTER_ADDR, MASTER_PORT, which torchrun .* sets: RANK, WORLD_SIZE, MASTER_ADDR, "
        r"MASTER_PORT are not set \(start the program with `torchrun --nproc-per-node N",
    ):
        init_dist("pytorch", backend=backend)
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    with pytest.raises(RuntimeError, match="sets: WORLD_SIZE is not set"):
        init_dist("pytorch", backend=backend)
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(ValueError, match="WORLD_SIZE='two' must be an integer"):
        init_dist("pytorch", backend=backend)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on machines without GPUs")
def test_nccl_without_gpus(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    with pytest.raises(
        RuntimeError, match=r"backend 'nccl' needs one CUDA GPU per process.*use backend='gloo'"
    ):
        init_dist("pytorch")  # nccl is the default backend, as in MMEngine


def test_pytorch_launcher_with_an_init_method_needs_no_master_variables(monkeypatch):
    with pytest.raises(RuntimeError, match="needs the environment variables RANK, WORLD_SIZE,"):
        init_dist("pytorch", backend="gloo", init_method="tcp://127.0.0.1:1")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(RuntimeError, match=r"variables RANK, WORLD_SIZE, which .* WORLD_SIZE is"):
        init_dist("pytorch", backend="gloo", init_method="tcp://127.0.0.1:1")


def test_slurm_launcher_needs_srun_variables(monkeypatch):
    with pytest.raises(
        RuntimeError, match="needs the environment variable SLURM_PROCID, which Slurm's srun sets"
    ):
        init_dist("slurm", backend="gloo")
    monkeypatch.setenv("SLURM_PROCID", "0")
    monkeypatch.setenv("SLURM_NTASKS", "2")
    with pytest.raises(RuntimeError, match=r"needs SLURM_NODELIST .* or MASTER_ADDR"):
        init_dist("slurm", backend="gloo")


def write_script(directory, name, body):
    directory.mkdir(exist_ok=True)
    script = directory / name
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.mark.skipif(sys.platform == "win32", reason="stand-ins for scontrol are shell scripts")
def test_slurm_master_address_lookup_errors(monkeypatch, tmp_path):
    monkeypatch.setenv("SLURM_PROCID", "0")
    monkeypatch.setenv("SLURM_NTASKS", "2")
    monkeypatch.setenv("SLURM_NODELIST", "node[1-2]")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(
        RuntimeError,
        match="needs `scontrol` to find the master host of SLURM_NODELIST='node\\[1-2\\]'",
    ):
        init_dist("slurm", backend="gloo", port=29999)
    write_script(tmp_path / "bin", "scontrol", 'echo "Invalid node name specified" >&2; exit 1')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(
        RuntimeError,
        match=r"`scontrol show hostnames node\[1-2\]` failed \(exit 1\): Invalid node name "
        r"specified; set MASTER_ADDR",
    ):
        init_dist("slurm", backend="gloo", port=29999)


def test_mpi_launcher_needs_mpirun_variables_and_master_addr(monkeypatch):
    with pytest.raises(
        RuntimeError,
        match="needs the environment variable OMPI_COMM_WORLD_RANK, which Open MPI's mpirun sets",
    ):
        init_dist("mpi", backend="gloo")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "0")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    with pytest.raises(
        RuntimeError, match="needs the environment variable OMPI_COMM_WORLD_LOCAL_RANK"
    ):
        init_dist("mpi", backend="gloo")
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0")
    with pytest.raises(
        RuntimeError, match=r"init_dist\('mpi'\) needs the environment variable MASTER_ADDR"
    ):
        init_dist("mpi", backend="gloo")


def test_missing_init_backend_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "deepspeed", None)  # import deepspeed raises ImportError
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    with pytest.raises(
        ImportError,
        match="init_backend='deepspeed' needs the deepspeed package: pip install deepspeed",
    ):
        init_dist("pytorch", backend="gloo", init_backend="deepspeed")


class _FakeAccelerator:
    """torch.accelerator as a machine with two XPUs answers it."""

    def __init__(self):
        self.selected = []

    def current_accelerator(self, check_available=False):
        return torch.device("xpu")

    def device_count(self):
        return 2

    def set_device_index(self, index):
        self.selected.append(index)


def test_each_process_drives_its_local_ranks_accelerator(monkeypatch):
    """The device is chosen through torch.accelerator, whatever its type (not only CUDA)."""
    fake = _FakeAccelerator()
    monkeypatch.setattr(torch, "accelerator", fake)
    started = []
    monkeypatch.setattr(
        torch.distributed, "init_process_group", lambda **kwargs: started.append(kwargs)
    )
    monkeypatch.setattr(torch.multiprocessing, "set_start_method", lambda method: None)
    variables = dict(RANK="1", WORLD_SIZE="2", LOCAL_RANK="1", MASTER_ADDR="127.0.0.1")
    for name, value in dict(variables, MASTER_PORT="29500").items():
        monkeypatch.setenv(name, value)
    init_dist("pytorch", backend="gloo")
    assert fake.selected == [1]
    assert started == [{"backend": "gloo"}]
