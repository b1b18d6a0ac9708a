# ruff: noqa: F811 (the fixtures imported below are arguments of the tests)
"""Checkpoints on S3 (the loopback moto server), checked as local ones are: an object cut short
or garbled is found on resume from its digest, named in a warning, and the checkpoint before it
is taken; a corrupt checkpoint named with ``--resume PATH`` is an error naming it; FSDP2 sharded
checkpoints go to S3 from 2 gloo ranks, complete once their ``.metadata`` is; a bucket that
disappears mid-run stops training with the storage error."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import gloo_group
import pytest
import s3_server
import torch
from runner_toy_model import toy_store_cfg
from runner_toys import captured_log
from s3_server import bucket, moto_endpoint  # noqa: F401 (fixtures)

from treadle import fileio
from treadle.fileio.backends import registry_utils
from treadle.fileio.backends.s3_backend import S3Backend
from treadle.runner.checkpoint import find_latest_checkpoint, save_checkpoint
from treadle.runner.checkpoint.loader import _load_checkpoint
from treadle.runner.checkpoint.remote_integrity import CorruptCheckpointError
from treadle.runner.hooks import Hook
from treadle.runner.hooks.checkpoint_failure import CheckpointSaveError
from treadle.runner.runner import Runner

SCENARIOS = Path(__file__).parent / "workers" / "remote_scenarios.py"


def client(endpoint: str):
    boto3 = pytest.importorskip("boto3")
    return boto3.client("s3", endpoint_url=endpoint)


def write(folder: str, *names: str) -> list[str]:
    paths = []
    for number, name in enumerate(names):
        path = f"{folder}/{name}"
        save_checkpoint({"meta": {"iter": number}, "state_dict": {"w": torch.arange(500.0)}}, path)
        paths.append(path)
    return paths


def garble(endpoint: str, url: str, keep: int | None = None) -> None:
    """Flip a byte in the middle of the object at ``url`` (its size unchanged), or keep only
    its first ``keep`` bytes."""
    bucket, key = url.removeprefix("s3://").split("/", 1)
    data = bytearray(client(endpoint).get_object(Bucket=bucket, Key=key)["Body"].read())
    if keep is None:
        data[len(data) // 2] ^= 0xFF
    else:
        data = data[:keep]
    client(endpoint).put_object(Bucket=bucket, Key=key, Body=bytes(data))


@pytest.fixture
def downloads(monkeypatch):
    """The S3 objects downloaded to local files, in order."""
    seen: list[str] = []
    original = S3Backend.copyfile_to_local

    def counted(self, src, dst):
        seen.append(os.fspath(src))
        return original(self, src, dst)

    monkeypatch.setattr(S3Backend, "copyfile_to_local", counted)
    return seen


def test_a_remote_checkpoint_carries_its_digest(bucket):
    (path,) = write(f"s3://{bucket}/run", "epoch_1.pth")
    recorded = json.loads(fileio.get_text(f"{path}.digest"))
    data = fileio.get(path)
    assert recorded["size"] == len(data)
    assert recorded["sha256"] == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    ("keep", "problem"),
    [
        (None, "its SHA-256 differs from the one recorded when it was written"),
        (300, "it is cut short: 300 of the"),
    ],
)
def test_a_corrupt_newest_object_falls_back_to_the_one_before(
    bucket, moto_endpoint, downloads, keep, problem
):
    folder = f"s3://{bucket}/run"
    paths = write(folder, "epoch_1.pth", "epoch_2.pth")
    garble(moto_endpoint, paths[1], keep)
    with captured_log() as log:
        assert find_latest_checkpoint(folder) == paths[0]
    text = "\n".join(log.messages)
    assert f"the checkpoint {paths[1]} is corrupt: {problem}" in text
    assert "trying the one before it" in text
    # Each candidate downloaded once: the chosen one's check is the copy the load reads.
    assert downloads == paths[::-1]
    assert _load_checkpoint(paths[0])["meta"]["iter"] == 0
    assert downloads == paths[::-1]


def test_loading_a_garbled_object_names_it(bucket, moto_endpoint):
    (path,) = write(f"s3://{bucket}/run", "epoch_1.pth")
    garble(moto_endpoint, path)
    with pytest.raises(CorruptCheckpointError, match=f"the checkpoint {path} is corrupt: its SHA"):
        _load_checkpoint(path)


def test_an_object_without_digest_is_checked_as_a_local_file(bucket, moto_endpoint):
    folder = f"s3://{bucket}/run"
    paths = write(folder, "epoch_1.pth", "epoch_2.pth")
    fileio.remove(f"{paths[1]}.digest")  # written by another tool, or an older treadle
    garble(moto_endpoint, paths[1])
    with captured_log() as log:
        assert find_latest_checkpoint(folder) == paths[0]
    assert f"{paths[1]} is corrupt: a record fails its CRC check" in "\n".join(log.messages)


def s3_cfg(tmp_path: Path, bucket: str, **overrides):
    return {**toy_store_cfg(tmp_path, f"s3://{bucket}/ckpts"), **overrides}


def test_auto_resume_skips_a_garbled_s3_checkpoint(tmp_path, bucket, moto_endpoint, downloads):
    keep = dict(type="CheckpointHook", interval=4, by_epoch=False, max_keep_ckpts=2)
    keep["out_dir"] = f"s3://{bucket}/ckpts"
    Runner(**s3_cfg(tmp_path, bucket, default_hooks=dict(checkpoint=keep))).train()
    run = f"s3://{bucket}/ckpts/{tmp_path.name}"
    # iter_4.pth went (max_keep_ckpts) and took its digest along.
    assert sorted(fileio.list_dir_or_file(run)) == [
        "iter_10.pth",
        "iter_10.pth.digest",
        "iter_8.pth",
        "iter_8.pth.digest",
        "last_checkpoint",
    ]
    garble(moto_endpoint, f"{run}/iter_10.pth")  # the last one, named by last_checkpoint
    resumed = Runner(**s3_cfg(tmp_path, bucket, resume=True))
    with captured_log(resumed.logger) as log:
        resumed.train()
    text = "\n".join(log.messages)
    assert f"the checkpoint {run}/iter_10.pth is corrupt: its SHA-256 differs" in text
    assert f"Auto resumed from the latest checkpoint {run}/iter_8.pth" in text
    assert "iter: 8" in text and resumed.iter == 10
    # Each candidate downloaded once; the resume read the copy its check downloaded.
    assert downloads == [f"{run}/iter_10.pth", f"{run}/iter_8.pth"]


def garbled_local(tmp_path: Path) -> str:
    local = dict(type="CheckpointHook", interval=4, by_epoch=False)
    Runner(**s3_cfg(tmp_path, "unused", default_hooks=dict(checkpoint=local))).train()
    path = str(tmp_path / "iter_10.pth")
    data = bytearray(Path(path).read_bytes())
    data[len(data) // 2] ^= 0xFF  # in the weights: torch.load would not notice
    Path(path).write_bytes(bytes(data))
    return path


def test_a_corrupt_named_local_checkpoint_is_an_error(tmp_path):
    path = garbled_local(tmp_path / "first")
    with pytest.raises(CorruptCheckpointError) as raised:
        Runner(**s3_cfg(tmp_path / "second", "unused", resume=path)).train()
    assert str(raised.value).startswith(f"cannot resume from {path}: it is corrupt (a record")
    assert raised.value.filename == path


def test_a_corrupt_named_s3_checkpoint_is_an_error(tmp_path, bucket, moto_endpoint):
    Runner(**s3_cfg(tmp_path, bucket)).train()
    path = f"s3://{bucket}/ckpts/{tmp_path.name}/iter_8.pth"
    garble(moto_endpoint, path)  # same size, a byte changed: torch.load would not notice
    runner = Runner(**s3_cfg(tmp_path / "again", bucket, resume=True, load_from=path))
    with pytest.raises(CorruptCheckpointError) as raised:
        runner.train()
    assert str(raised.value).startswith(f"cannot resume from {path}: it is corrupt (its SHA-256")


class DeleteBucket(Hook):
    """Empties and deletes the bucket once the checkpoint of iteration 4 is saved."""

    priority = "LOWEST"

    def __init__(self, endpoint: str, bucket: str) -> None:
        self.endpoint, self.bucket = endpoint, bucket

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 != 4:
            return
        s3 = client(self.endpoint)
        for item in s3.list_objects_v2(Bucket=self.bucket).get("Contents", []):
            s3.delete_object(Bucket=self.bucket, Key=item["Key"])
        s3.delete_bucket(Bucket=self.bucket)


def test_a_bucket_that_disappears_stops_training(tmp_path, bucket, moto_endpoint):
    cfg = s3_cfg(tmp_path, bucket, custom_hooks=[DeleteBucket(moto_endpoint, bucket)])
    runner = Runner(**cfg)
    with pytest.raises(CheckpointSaveError) as raised:
        runner.train()
    url = f"s3://{bucket}/ckpts/{tmp_path.name}/iter_8.pth"
    message = str(raised.value)
    assert f"could not save {url} at iteration 8" in message
    assert f"bucket '{bucket}' does not exist" in message
    assert "is gone, so every later save would fail too: training stops" in message
    assert f"last_checkpoint still names the previous checkpoint, {url[:-10]}iter_4.pth" in message
    assert runner.iter == 7  # stopped at the failed save, not at max_iters
    # The work dir still names the last complete checkpoint, never the failed one.
    pointer = (tmp_path / "last_checkpoint").read_text()
    assert pointer == url.replace("iter_8", "iter_4")


@pytest.fixture(scope="module")
def sharded_group(moto_endpoint, tmp_path_factory):
    """The FSDP2 scenarios on 2 gloo ranks, writing to a bucket of their own."""
    out_dir = tmp_path_factory.mktemp("remote")
    with pytest.MonkeyPatch.context() as patch:
        s3_server.use_moto(moto_endpoint, patch, out_dir)
        name = s3_server.new_bucket(moto_endpoint)
        environment = {key: value for key, value in os.environ.items() if key.startswith("AWS_")}
        environment["TREADLE_TEST_GONE_BUCKET"] = s3_server.new_bucket(moto_endpoint)
    environment["TREADLE_TEST_BUCKET"] = name
    results = gloo_group.run_group(SCENARIOS, 2, out_dir, extra_env=environment)
    return (
        name,
        lambda rank, scenario="scenario_sharded_checkpoints_on_s3": gloo_group.scenario_value(
            results, rank, scenario
        ),
    )


def test_fsdp2_sharded_checkpoints_go_to_s3_and_resume_exactly(sharded_group):
    name, value = sharded_group
    folder = f"s3://{name}/fsdp"
    for rank in (0, 1):
        result = value(rank)
        assert result["resumed"] == result["continued"]
        assert result["meta"]["epoch"] == 1 and result["complete"] == [True, True]
        assert result["latest"] == f"{folder}/epoch_2.pth"
    # One shard file per rank, and DCP's .metadata (written last, the completion marker).
    assert value(0)["objects"] == [
        f"epoch_{n}.pth/{file}"
        for n in (1, 2)
        for file in (".metadata", "__0_0.distcp", "__1_0.distcp")
    ]


def test_a_sharded_s3_checkpoint_without_its_marker_is_skipped(
    sharded_group, moto_endpoint, monkeypatch, tmp_path
):
    name, _ = sharded_group
    s3_server.use_moto(moto_endpoint, monkeypatch, tmp_path)
    monkeypatch.setattr(registry_utils, "backend_instances", {})  # clients of this endpoint
    folder = f"s3://{name}/fsdp"
    fileio.remove(f"{folder}/epoch_2.pth/.metadata")  # a save stopped before its end
    assert find_latest_checkpoint(folder) == f"{folder}/epoch_1.pth"


def test_a_bucket_gone_stops_every_rank_together(sharded_group):
    _, value = sharded_group
    rank0, rank1 = (value(rank, "scenario_a_bucket_gone_stops_every_rank") for rank in (0, 1))
    assert rank0["iters"] == rank1["iters"] == 7  # both stopped at the failed save
    assert "bucket" in rank0["raised"] and "does not exist" in rank0["raised"]
    # Rank 1 wrote nothing itself; it learns the destination is gone and stops with rank 0.
    assert "rank 0 could not write it" in rank1["raised"]
    assert "is gone, so every later save would fail too: training stops" in rank1["raised"]
