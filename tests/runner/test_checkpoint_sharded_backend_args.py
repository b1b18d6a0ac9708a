# ruff: noqa: F811 (the fixture imported below is an argument of the tests)
"""Sharded (FSDP2, torch.distributed.checkpoint) checkpoints on S3 with the endpoint and
credentials given only in ``backend_args``, as CheckpointHook takes them for whole files: the
shard files, ``.metadata`` and the pointer are written through them, and a resume finds and reads
the checkpoint through them. No AWS endpoint or credential reaches the processes from their
environment. One process here; 2 gloo ranks in workers/sharded_backend_args_scenarios.py."""

from __future__ import annotations

import json
from pathlib import Path

import gloo_group
import pytest
import torch
from s3_backend_args import new_bucket, objects, s3_backend_args, without_aws_environment
from s3_server import moto_endpoint  # noqa: F401 (a fixture)

from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint
from treadle.runner.strategies import SingleDeviceStrategy
from treadle.runner.strategies.checkpoint_io import CheckpointIO, ShardedCheckpointIO

SCENARIOS = Path(__file__).parent / "workers" / "sharded_backend_args_scenarios.py"


@pytest.fixture(scope="module")
def group(moto_endpoint, tmp_path_factory):
    """The scenarios on 2 gloo ranks, the S3 endpoint and credentials in backend_args only."""
    out_dir = tmp_path_factory.mktemp("sharded_backend_args")
    bucket = new_bucket(moto_endpoint)
    backend_args = s3_backend_args(moto_endpoint)
    with pytest.MonkeyPatch.context() as patch:
        without_aws_environment(patch, out_dir)
        results = gloo_group.run_group(
            SCENARIOS,
            2,
            out_dir,
            extra_env={
                "TREADLE_TEST_BUCKET": bucket,
                "TREADLE_TEST_BACKEND_ARGS": json.dumps(backend_args),
            },
        )
    return bucket, lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_fsdp2_runner_saves_to_s3_through_backend_args_and_resumes_exactly(group):
    _, value = group
    name = "scenario_runner_saves_with_backend_args_and_resumes_exactly"
    for rank in (0, 1):
        result = value(rank, name)
        assert result["same"], f"rank {rank}: the resumed weights differ"
        assert result["same_by_path"], f"rank {rank}: the weights resumed by path differ"
        # The resumed runs trained only the last epoch (from epoch_2.pth, epoch_3.pth being cut
        # short for the first, named for the second).
        first, resumed, by_path = result["trained"]
        assert resumed > 0 and first == 3 * resumed and by_path == resumed
    shards = [".metadata", "__0_0.distcp", "__1_0.distcp"]
    assert value(0, name)["objects"] == [
        *(f"epoch_{n}.pth/{file}" for n in (1, 2, 3) for file in shards),
        "last_checkpoint",
    ]


def test_sharded_checkpoint_io_takes_backend_args_on_two_ranks(group):
    _, value = group
    for rank in (0, 1):
        weights, meta = value(rank, "scenario_sharded_io_saves_and_loads_with_backend_args")
        assert weights == torch.arange(6.0).tolist()  # rank 0's: it saves what is not sharded
        assert meta == {"iter": 1}


def test_sharded_checkpoint_io_takes_backend_args_in_one_process(
    moto_endpoint, monkeypatch, tmp_path
):
    without_aws_environment(monkeypatch, tmp_path)
    bucket = new_bucket(moto_endpoint)
    backend_args = s3_backend_args(moto_endpoint)
    del backend_args["backend"]  # the backend of the path's prefix
    path = f"s3://{bucket}/run/epoch_1.pth"
    saved = {"state_dict": {"w": torch.randn(4, 3)}, "meta": {"epoch": 1}}
    ShardedCheckpointIO().save(saved, path, backend_args=backend_args)
    assert objects(moto_endpoint, bucket) == [
        "run/epoch_1.pth/.metadata",
        "run/epoch_1.pth/__0_0.distcp",
    ]
    assert is_sharded_checkpoint(path, backend_args)
    loaded = ShardedCheckpointIO().load(path, backend_args=backend_args)
    assert torch.equal(loaded["state_dict"]["w"], saved["state_dict"]["w"])
    assert loaded["meta"] == {"epoch": 1}


@pytest.mark.parametrize(
    ("path", "backend_args", "named"),
    [
        ("memory://run/epoch_1.pth", {"backend": "http"}, "backend_args {'backend': 'http'} name"),
        ("https://example.com/run/epoch_1.pth", None, "its path names"),
    ],
)
def test_a_backend_that_cannot_hold_a_sharded_checkpoint_is_named(path, backend_args, named):
    with pytest.raises(ValueError) as raised:
        ShardedCheckpointIO().save({"meta": {"epoch": 1}}, path, backend_args=backend_args)
    assert str(raised.value) == (
        f"sharded checkpoint {path}: {named} the backend HTTPBackend, which cannot hold a "
        "sharded checkpoint (torch.distributed.checkpoint writes one object per rank): save it "
        "to a local path, s3:// or another writable treadle.fileio store"
    )


def test_a_checkpoint_io_whose_load_takes_no_backend_args_still_reads(tmp_path):
    class EarlierIO(CheckpointIO):  # written before load was given backend_args
        def load(self, filepath, *, map_location="cpu", template=None):
            return super().load(filepath, map_location=map_location, template=template)

    strategy = SingleDeviceStrategy()
    strategy.checkpoint_io = EarlierIO()
    path = str(tmp_path / "epoch_1.pth")
    torch.save({"meta": {"epoch": 1}}, path)
    read = strategy.read_checkpoint(path, backend_args={"backend": "local"})
    assert read == {"meta": {"epoch": 1}}
