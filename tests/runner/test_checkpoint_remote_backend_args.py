# ruff: noqa: F811 (the fixture imported below is an argument of the tests)
"""Checkpoints on S3 reached only through CheckpointHook's ``backend_args`` (endpoint and
credentials, the MMEngine way), where a pointer or a folder on the store is read or written:
auto-resume of a new work_dir whose checkpoints are all on the store, ``find_latest_checkpoint``
of a folder on the store, the preemption checkpoint and a non-finite rollback, ``treadle
checkpoint consolidate --backend-args``, and a resume of 2 gloo ranks. No AWS
endpoint or credential reaches the code from the environment
(:func:`s3_backend_args.without_aws_environment`), so the default backend cannot reach the
server."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import gloo_group
import pytest
import torch
from runner_toy_model import toy_store_cfg
from runner_toys import captured_log
from s3_backend_args import new_bucket, objects, s3_backend_args, without_aws_environment
from s3_server import moto_endpoint  # noqa: F401 (a fixture)
from storage_toys import StorageToyModel  # noqa: F401 (registers the toys)

from treadle import fileio
from treadle.runner.checkpoint import _load_checkpoint, find_latest_checkpoint, save_checkpoint
from treadle.runner.checkpoint.latest import resumable_checkpoints
from treadle.runner.checkpoint.pointer import read_pointer, write_pointer
from treadle.runner.checkpoint.sharded import save_sharded_checkpoint
from treadle.runner.cli.main import main
from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner
from treadle.runner.runner.preemption import TrainingPreempted

SCENARIOS = Path(__file__).parent / "workers" / "remote_backend_args_scenarios.py"


@pytest.fixture
def store(moto_endpoint, monkeypatch, tmp_path):
    """A new bucket, and the hook's backend_args for it: the only way to reach it."""
    without_aws_environment(monkeypatch, tmp_path)
    return new_bucket(moto_endpoint), s3_backend_args(moto_endpoint)


def weights(runner: Runner) -> dict[str, torch.Tensor]:
    return {key: value.clone() for key, value in runner.model.state_dict().items()}


def same(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> bool:
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def test_auto_resume_of_a_new_work_dir_finds_the_checkpoints_on_the_store(tmp_path, store):
    # The machine that trained is gone with its work_dir: the same config on another one
    # (same work_dir name, so the same out_dir folder) continues from the store.
    bucket, backend_args = store
    work_dir = tmp_path / "run"
    cfg = toy_store_cfg(work_dir, f"s3://{bucket}/ckpts", backend_args=backend_args)
    first = Runner(**cfg)
    first.train()
    final = weights(first)
    shutil.rmtree(work_dir)
    again = toy_store_cfg(work_dir, f"s3://{bucket}/ckpts", backend_args=backend_args)
    resumed = Runner(**again, resume=True)
    with captured_log(resumed.logger) as log:
        resumed.train()
    newest = f"s3://{bucket}/ckpts/run/iter_10.pth"
    assert f"Auto resumed from the latest checkpoint {newest}." in log.messages
    assert resumed.iter == 10
    assert same(weights(resumed), final)


def test_the_pointer_of_a_folder_on_the_store_is_read_through_backend_args(store):
    bucket, backend_args = store
    folder = f"s3://{bucket}/run"
    for step in (4, 8):
        checkpoint = {"meta": {"iter": step}}
        save_checkpoint(checkpoint, f"{folder}/iter_{step}.pth", backend_args=backend_args)
    # The pointer names a checkpoint in another folder: only the pointer leads to it.
    moved = f"s3://{bucket}/moved/iter_12.pth"
    save_checkpoint({"meta": {"iter": 12}}, moved, backend_args=backend_args)
    backend = fileio.get_file_backend(folder, backend_args=backend_args)
    write_pointer(folder, moved, backend=backend)
    assert read_pointer(folder, backend_args=backend_args) == moved
    assert find_latest_checkpoint(folder, backend_args) == moved
    assert resumable_checkpoints(folder, backend_args) == [
        moved,
        f"{folder}/iter_8.pth",
        f"{folder}/iter_4.pth",
    ]


class _SigtermAt(Hook):
    """Sends this process SIGTERM after iteration ``at``, as a scheduler would."""

    def __init__(self, at: int) -> None:
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter == self.at:
            os.kill(os.getpid(), signal.SIGTERM)


def test_a_preempted_run_saves_to_the_store_through_backend_args(tmp_path, store):
    bucket, backend_args = store
    cfg = toy_store_cfg(tmp_path / "run", f"s3://{bucket}/ckpts", backend_args=backend_args)
    runner = Runner(**cfg, custom_hooks=[_SigtermAt(5)])
    with pytest.raises(TrainingPreempted):
        runner.train()
    folder = f"s3://{bucket}/ckpts/run"
    assert read_pointer(folder, backend_args) == f"{folder}/preempted.pth"
    saved = _load_checkpoint(f"{folder}/preempted.pth", backend_args=backend_args)
    assert saved["meta"]["iter"] == runner.iter > 5  # after the iteration in progress


def test_a_rollback_reads_the_checkpoint_on_the_store_through_backend_args(tmp_path, store):
    bucket, backend_args = store
    cfg = toy_store_cfg(tmp_path / "run", f"s3://{bucket}/ckpts", backend_args=backend_args)
    cfg.update(
        model=dict(type="StorageToyModel", nan_at=[5]),
        train_cfg=dict(
            by_epoch=False, max_iters=10, nonfinite_loss="rollback", nonfinite_check_interval=1
        ),
    )
    runner = Runner(**cfg)
    with captured_log(runner.logger) as log:
        runner.train()
    assert runner.iter == 10
    text = "\n".join(log.messages)
    assert f"to s3://{bucket}/ckpts/run/iter_4.pth (iteration 4)" in text
    assert all(torch.isfinite(p).all() for p in runner.model.parameters())


@pytest.fixture
def sharded_on_s3(store) -> str:
    bucket, backend_args = store
    path = f"s3://{bucket}/fsdp/epoch_2.pth"
    checkpoint = {"state_dict": {"layer.weight": torch.arange(6.0).view(3, 2)}}
    save_sharded_checkpoint({**checkpoint, "meta": {"epoch": 2}}, path, backend_args=backend_args)
    return path


@pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
def test_consolidate_reads_and_writes_the_store_through_backend_args(
    sharded_on_s3, store, tmp_path, capsys
):
    bucket, backend_args = store
    option = ["--backend-args", json.dumps(backend_args)]
    out = f"s3://{bucket}/whole/epoch_2.pth"
    assert main(["checkpoint", "consolidate", sharded_on_s3, out, *option]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}: 1 weights and meta"
    assert "whole/epoch_2.pth" in objects(backend_args["endpoint_url"], bucket)
    saved = _load_checkpoint(out, backend_args=backend_args)
    assert saved["state_dict"]["layer.weight"].tolist() == [[0, 1], [2, 3], [4, 5]]
    assert saved["meta"] == {"epoch": 2}
    # A local OUT is written as it is (the arguments describe the store).
    local = str(tmp_path / "model.safetensors")
    assert main(["checkpoint", "consolidate", sharded_on_s3, local, *option]) == 0
    assert _load_checkpoint(local)["state_dict"]["layer.weight"].shape == (3, 2)
    missing = f"s3://{bucket}/fsdp/epoch_9.pth"
    assert main(["checkpoint", "consolidate", missing, local, *option]) == 1
    assert f"no complete sharded checkpoint at {missing}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{endpoint_url: x}", "not JSON (Expecting property name enclosed in double quotes"),
        ('["s3"]', "a JSON list, not an object"),
    ],
)
def test_consolidate_names_the_option_for_bad_backend_args(tmp_path, capsys, text, why):
    command = ["checkpoint", "consolidate", "s3://b/epoch_1.pth", str(tmp_path / "o.pth")]
    with pytest.raises(SystemExit) as stopped:
        main([*command, "--backend-args", text])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument --backend-args: {text!r} is {why}" in err
    assert 'such as \'{"endpoint_url": "http://127.0.0.1:9000"}\'' in err


def test_two_ranks_resume_from_s3_through_backend_args(moto_endpoint, tmp_path):
    out_dir = tmp_path / "group"
    out_dir.mkdir()
    bucket = new_bucket(moto_endpoint)
    with pytest.MonkeyPatch.context() as patch:
        without_aws_environment(patch, tmp_path)
        results = gloo_group.run_group(
            SCENARIOS,
            2,
            out_dir,
            extra_env={
                "TREADLE_TEST_BUCKET": bucket,
                "TREADLE_TEST_BACKEND_ARGS": json.dumps(s3_backend_args(moto_endpoint)),
            },
        )
    saved = [f"iter_{step}.pth{suffix}" for step in (10, 4, 8) for suffix in ("", ".digest")]
    assert objects(moto_endpoint, bucket) == [
        f"ckpts/run/{name}" for name in [*saved, "last_checkpoint"]
    ]
    for rank in (0, 1):
        value = gloo_group.scenario_value(
            results, rank, "scenario_save_then_resume_from_s3_on_two_ranks"
        )
        saved = value["saved"]
        assert (saved["iter"], saved["trained"]) == (10, 10)
        for resumed in (value["again"], value["fresh"]):
            # Resumed at iteration 10 with its weights: nothing left to train.
            assert (resumed["iter"], resumed["trained"]) == (10, 0), f"rank {rank}"
            assert resumed["weights"] == saved["weights"], f"rank {rank}"
