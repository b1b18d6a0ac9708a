# ruff: noqa: F811 (the fixture imported below is an argument of the tests)
"""Whole-file checkpoints on S3 with the endpoint and credentials given only in CheckpointHook's
``backend_args`` (the MMEngine way): a run saves them, and a later run finds, checks (against the
digest written beside each) and loads them through the same ``backend_args``: ``resume=True``,
a named ``resume='s3://...'`` and ``load_from='s3://...'``. No AWS endpoint or credential
reaches the runs from the environment (:func:`s3_backend_args.without_aws_environment`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from runner_toy_model import toy_iter_cfg, toy_store_cfg, unique_name
from runner_toys import captured_log
from s3_backend_args import new_bucket, objects, s3_backend_args, without_aws_environment
from s3_server import moto_endpoint  # noqa: F401 (a fixture)

from treadle.runner.checkpoint.loader import CheckpointLoader, _load_checkpoint
from treadle.runner.runner import Runner


@pytest.fixture
def store(moto_endpoint, monkeypatch, tmp_path):
    """A new bucket, and the hook's backend_args for it: the only way to reach it."""
    without_aws_environment(monkeypatch, tmp_path)
    return new_bucket(moto_endpoint), s3_backend_args(moto_endpoint)


def cfg(work_dir: Path, bucket: str, backend_args: dict, **overrides) -> dict:
    run = toy_store_cfg(
        work_dir, f"s3://{bucket}/ckpts", max_keep_ckpts=2, backend_args=backend_args
    )
    return {**run, **overrides}


def weights(runner: Runner) -> dict[str, torch.Tensor]:
    return {key: value.clone() for key, value in runner.model.state_dict().items()}


def same(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> bool:
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def trained(tmp_path: Path, store) -> tuple[str, dict[str, torch.Tensor]]:
    """Train 10 iterations, saving iter_4/8/10.pth to S3 (max_keep_ckpts=2 removes iter_4.pth
    and its digest through backend_args); the run's S3 folder and its final weights."""
    bucket, backend_args = store
    runner = Runner(**cfg(tmp_path / "run", bucket, backend_args))
    runner.train()
    assert objects(backend_args["endpoint_url"], bucket) == [
        f"ckpts/run/{name}"
        for name in ("iter_10.pth", "iter_10.pth.digest", "iter_8.pth", "iter_8.pth.digest")
    ] + ["ckpts/run/last_checkpoint"]
    return f"s3://{bucket}/ckpts/run", weights(runner)


def test_auto_resume_reads_the_newest_checkpoint_through_backend_args(tmp_path, store):
    run, final = trained(tmp_path, store)
    bucket, backend_args = store
    resumed = Runner(**cfg(tmp_path / "run", bucket, backend_args, resume=True))
    with captured_log(resumed.logger) as log:
        resumed.train()
    assert f"Auto resumed from the latest checkpoint {run}/iter_10.pth." in log.messages
    assert resumed.iter == 10
    assert same(weights(resumed), final)


def test_a_named_s3_checkpoint_resumes_through_backend_args(tmp_path, store):
    run, final = trained(tmp_path, store)
    bucket, backend_args = store
    named = f"{run}/iter_8.pth"
    resumed = Runner(**cfg(tmp_path / "again", bucket, backend_args, resume=named))
    with captured_log(resumed.logger) as log:
        resumed.train()
    assert f"resume: continuing from {named}: the checkpoint named" in "\n".join(log.messages)
    assert resumed.iter == 10
    assert same(weights(resumed), final)


def test_load_from_an_s3_checkpoint_reads_it_through_backend_args(tmp_path, store):
    run, final = trained(tmp_path, store)
    bucket, backend_args = store
    runner = Runner(**cfg(tmp_path / "new", bucket, backend_args, load_from=f"{run}/iter_10.pth"))
    runner.load_or_resume()
    assert same(weights(runner), final)
    assert runner.iter == 0  # the weights only: a new run


def test_a_loader_is_given_backend_args_only_when_it_names_them(tmp_path, store):
    run, _ = trained(tmp_path, store)
    _, backend_args = store
    checkpoint = _load_checkpoint(f"{run}/iter_8.pth", backend_args=backend_args)
    assert checkpoint["meta"]["iter"] == 8
    given: list[dict] = []

    def load_from_zoo(filename, map_location=None, **kwargs):  # passes kwargs to torch.load
        given.append(kwargs)
        return {"meta": {"iter": 0}}

    CheckpointLoader.register_scheme("zoo-args://", load_from_zoo)
    try:
        _load_checkpoint("zoo-args://model", backend_args=backend_args)
    finally:
        del CheckpointLoader._schemes["zoo-args://"]
    assert given == [{"weights_only": True}]


def test_the_hooks_backend_args_are_not_used_for_another_kind_of_store(tmp_path, store):
    # The hook's args describe its S3 store: a load_from on memory:// is read as it is (with
    # them, a memory:// path would be sent to S3).
    from treadle.runner.checkpoint import save_checkpoint

    bucket, backend_args = store
    source = Runner(**toy_iter_cfg(str(tmp_path / "source"), experiment_name=unique_name("src")))
    path = f"memory://{unique_name('weights')}/model.pth"
    save_checkpoint({"state_dict": source.model.state_dict()}, path)
    runner = Runner(**cfg(tmp_path / "new", bucket, backend_args, load_from=path))
    runner.load_or_resume()
    assert same(weights(runner), weights(source))
