"""init_dist with each launcher, forming real gloo groups of 2 local processes: through
torchrun itself, and with the variables Slurm's srun and Open MPI's mpirun set (a stand-in
`scontrol` answers the host lookup, since no cluster runs here)."""

import json
import stat
import subprocess
import sys

import pytest

WORLD_SIZE = 2


def check_group(helpers, results, master_port):
    for rank in range(WORLD_SIZE):
        report = helpers.scenario_value(results, rank, "scenario_launched")
        assert report["dist_info"] == (rank, WORLD_SIZE)
        assert report["backend"] == "gloo"
        assert report["sum"] == sum(range(1, WORLD_SIZE + 1))
        # Every launcher's variables end up as torchrun's.
        assert report["variables"] == {
            "RANK": str(rank),
            "WORLD_SIZE": str(WORLD_SIZE),
            "LOCAL_RANK": str(rank),
            "LOCAL_WORLD_SIZE": str(WORLD_SIZE),
        }
        assert report["local"] == (rank, WORLD_SIZE)
        assert report["master"] == ("127.0.0.1", str(master_port))
        assert report["infer_launcher"] == "pytorch"  # WORLD_SIZE is set now


def test_torchrun_launcher(helpers, tmp_path):
    port = helpers.free_port()
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        "1",
        "--nproc_per_node",
        str(WORLD_SIZE),
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(port),
        str(helpers.rank_runner),
        str(helpers.workers / "launcher_scenarios.py"),
        str(tmp_path),
        "pytorch",
    ]
    torchrun = subprocess.Popen(
        command,
        env=helpers.clean_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    outputs = helpers.wait_all([torchrun])
    results = helpers.read_results(tmp_path, WORLD_SIZE, outputs)
    check_group(helpers, results, port)
    assert torchrun.returncode == 0, outputs[0]


@pytest.fixture
def fake_scontrol(tmp_path):
    """A directory holding an `scontrol` that logs its arguments and answers 127.0.0.1."""
    directory = tmp_path / "bin"
    directory.mkdir()
    log = tmp_path / "scontrol.log"
    script = directory / "scontrol"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nprintf "127.0.0.1\\nlocalhost\\n"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return directory, log


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in scontrol is a shell script")
def test_slurm_launcher(helpers, tmp_path, fake_scontrol):
    scontrol_dir, scontrol_log = fake_scontrol
    port = helpers.free_port()
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    path = f"{scontrol_dir}:{helpers.clean_environment()['PATH']}"

    def srun_variables(rank, _port):
        return {
            "SLURM_PROCID": str(rank),
            "SLURM_NTASKS": str(WORLD_SIZE),
            "SLURM_LOCALID": str(rank),
            "SLURM_NTASKS_PER_NODE": str(WORLD_SIZE),
            "SLURM_NODELIST": "node[01-02]",
            "SLURM_JOB_ID": "1234",
            "PATH": path,
        }

    results = helpers.run_group(
        "launcher_scenarios.py",
        WORLD_SIZE,
        out_dir,
        launcher="slurm",
        per_rank_env=srun_variables,
        init_kwargs=json.dumps({"port": port}),
    )
    check_group(helpers, results, port)
    # Each rank asked scontrol for the first host of the node list.
    assert scontrol_log.read_text().splitlines() == ["show hostnames node[01-02]"] * WORLD_SIZE


def test_mpi_launcher(helpers, tmp_path):
    port = helpers.free_port()

    def mpirun_variables(rank, _port):
        return {
            "OMPI_COMM_WORLD_RANK": str(rank),
            "OMPI_COMM_WORLD_SIZE": str(WORLD_SIZE),
            "OMPI_COMM_WORLD_LOCAL_RANK": str(rank),
            "OMPI_COMM_WORLD_LOCAL_SIZE": str(WORLD_SIZE),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
        }

    results = helpers.run_group(
        "launcher_scenarios.py", WORLD_SIZE, tmp_path, launcher="mpi", per_rank_env=mpirun_variables
    )
    check_group(helpers, results, port)


def test_slurm_launcher_uses_master_addr_and_port_from_the_environment(helpers, tmp_path):
    """With MASTER_ADDR set, scontrol is not needed (none is on PATH here); MASTER_PORT comes
    from the environment without ``port=``; SLURM_LOCALID unset: the local rank is the rank
    modulo the GPUs (none here: 0); the local size is read from srun's compressed layout."""
    port = helpers.free_port()

    def srun_variables(rank, _port):
        return {
            "SLURM_PROCID": str(rank),
            "SLURM_NTASKS": "1",
            "SLURM_NODELIST": "node01",
            # The layout of a bigger job, of which this process plays the third node's only task.
            "SLURM_TASKS_PER_NODE": "4(x2),1",
            "SLURM_NODEID": "2",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
            "PATH": str(tmp_path / "no-scontrol-here"),
        }

    results = helpers.run_group(
        "launcher_scenarios.py", 1, tmp_path, launcher="slurm", per_rank_env=srun_variables
    )
    report = helpers.scenario_value(results, 0, "scenario_launched")
    assert report["dist_info"] == (0, 1)
    assert report["master"] == ("127.0.0.1", str(port))
    assert report["variables"] == {
        "RANK": "0",
        "WORLD_SIZE": "1",
        "LOCAL_RANK": "0",
        "LOCAL_WORLD_SIZE": "1",
    }
    assert report["local"] == (0, 1)
