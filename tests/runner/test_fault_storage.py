# ruff: noqa: F811 (the fixtures imported below are arguments of the tests)
"""CheckpointHook on faulty storage: S3 through a proxy that fails on purpose (503, reset
connections, a slow endpoint) and a full local disk. Transient faults are retried through
treadle.fileio; a failure that outlasts the retries never leaves an object named as a checkpoint,
is logged, and training goes on unless ``on_save_error='stop'``."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
import torch
from runner_toy_model import toy_iter_cfg
from runner_toys import captured_log
from s3_server import bucket, moto_endpoint  # noqa: F401 (fixtures)
from storage_proxy import faulty_proxy  # noqa: F401 (a fixture)
from storage_toys import StorageToyModel  # noqa: F401 (registers the toys)

from treadle.runner.hooks.checkpoint_failure import CheckpointSaveError
from treadle.runner.runner import Runner


def put_of(name: str):
    return lambda method, path: method == "PUT" and path.split("?")[0].endswith("/" + name)


def s3_cfg(tmp_path, proxy, bucket, **hook):
    backend_args = dict(endpoint_url=proxy.url, max_attempts=3, backoff=0.001, **hook.pop("ba", {}))
    checkpoint = dict(
        type="CheckpointHook",
        interval=4,
        by_epoch=False,
        out_dir=f"s3://{bucket}/ckpts",
        backend_args=backend_args,
        **hook,
    )
    return toy_iter_cfg(
        tmp_path,
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(checkpoint=checkpoint),
    )


def keys(endpoint: str, bucket: str) -> list[str]:
    """The names in the bucket, without the digests beside the checkpoints (each checkpoint
    object has one, see test_fault_remote.py)."""
    boto3 = pytest.importorskip("boto3")  # the s3 extra of treadle-fileio
    listing = boto3.client("s3", endpoint_url=endpoint).list_objects_v2(Bucket=bucket)
    names = sorted(item["Key"].rsplit("/", 1)[-1] for item in listing.get("Contents", []))
    return [name for name in names if not name.endswith(".digest")]


def puts(proxy, name: str) -> int:
    """How many PUT requests the proxy saw for the object ``name`` (not its digest)."""
    return sum(1 for method, path, _ in proxy.requests if put_of(name)(method, path))


def pointer(tmp_path) -> str:
    return (tmp_path / "last_checkpoint").read_text()


@pytest.mark.parametrize("fault", [(503, "ServiceUnavailable"), (503, "SlowDown"), "reset"])
def test_transient_faults_are_retried(tmp_path, faulty_proxy, bucket, moto_endpoint, fault):
    faulty_proxy.fail(put_of("iter_4.pth"), fault, times=2)
    runner = Runner(**s3_cfg(tmp_path, faulty_proxy, bucket))
    runner.train()
    assert puts(faulty_proxy, "iter_4.pth") == 3
    assert keys(moto_endpoint, bucket) == [
        "iter_10.pth",
        "iter_4.pth",
        "iter_8.pth",
        "last_checkpoint",
    ]
    assert pointer(tmp_path).endswith("/iter_10.pth")


def test_a_slow_endpoint_is_retried_after_its_timeout(
    tmp_path, faulty_proxy, bucket, moto_endpoint
):
    faulty_proxy.fail(put_of("iter_4.pth"), ("slow", 1.0), times=1)
    runner = Runner(
        **s3_cfg(tmp_path, faulty_proxy, bucket, ba=dict(client_config=dict(read_timeout=0.2)))
    )
    runner.train()
    assert puts(faulty_proxy, "iter_4.pth") >= 2
    assert "iter_4.pth" in keys(moto_endpoint, bucket)


def test_a_failure_past_the_retries_is_logged_and_training_goes_on(
    tmp_path,
    faulty_proxy,
    bucket,
    moto_endpoint,
):
    faulty_proxy.fail(put_of("iter_8.pth"), (503, "SlowDown"), times=None)
    seen = {}

    runner = Runner(**s3_cfg(tmp_path, faulty_proxy, bucket))
    original = runner.save_checkpoint

    def save_checkpoint(*args, **kwargs):
        seen[args[1]] = pointer(tmp_path) if (tmp_path / "last_checkpoint").exists() else None
        return original(*args, **kwargs)

    runner.save_checkpoint = save_checkpoint
    with captured_log(runner.logger) as log:
        runner.train()
    errors = [m for m in log.messages if "could not save" in m]
    assert len(errors) == 1, log.messages
    assert (
        f"could not save s3://{bucket}/ckpts/{tmp_path.name}/iter_8.pth at iteration 8" in errors[0]
    )
    assert "failed after 3 attempts" in errors[0] and "SlowDown" in errors[0]
    assert "iter_4.pth is intact and last_checkpoint still names it; training goes on" in errors[0]
    assert puts(faulty_proxy, "iter_8.pth") == 3
    # Never an object named as the checkpoint that failed; the pointer skipped it.
    assert keys(moto_endpoint, bucket) == ["iter_10.pth", "iter_4.pth", "last_checkpoint"]
    assert seen["iter_10.pth"].endswith("/iter_4.pth")
    assert pointer(tmp_path).endswith("/iter_10.pth")
    assert runner.iter == 10


def test_a_failed_multipart_upload_leaves_no_object(tmp_path, faulty_proxy, bucket, moto_endpoint):
    """A 6 MiB checkpoint goes up in two parts; the second fails every time: the upload is
    aborted, no object and no pending upload remain, and training goes on."""
    cfg = s3_cfg(
        tmp_path,
        faulty_proxy,
        bucket,
        ba=dict(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024),
    )
    cfg["model"] = dict(type="StorageToyModel", ballast=1536 * 1024)
    cfg["train_cfg"] = dict(by_epoch=False, max_iters=8, val_interval=100)
    part_2 = lambda m, p: m == "PUT" and "iter_8.pth" in p and "partNumber=2" in p  # noqa: E731
    faulty_proxy.fail(part_2, (500, "InternalError"), times=None)
    runner = Runner(**cfg)
    with captured_log(runner.logger) as log:
        runner.train()
    assert any("could not save" in m and "iter_8.pth" in m for m in log.messages)
    assert sum(part_2(m, p) for m, p, _ in faulty_proxy.requests) == 3
    assert keys(moto_endpoint, bucket) == ["iter_4.pth", "last_checkpoint"]
    boto3 = pytest.importorskip("boto3")  # the s3 extra of treadle-fileio
    client = boto3.client("s3", endpoint_url=moto_endpoint)
    assert "Uploads" not in client.list_multipart_uploads(Bucket=bucket)
    assert pointer(tmp_path).endswith("/iter_4.pth")


def test_a_pointer_that_cannot_be_moved_is_logged(tmp_path, faulty_proxy, bucket, moto_endpoint):
    faulty_proxy.fail(put_of("last_checkpoint"), (503, "SlowDown"), times=3)  # one save's tries
    runner = Runner(**s3_cfg(tmp_path, faulty_proxy, bucket))
    with captured_log(runner.logger) as log:
        runner.train()
    (error,) = [m for m in log.messages if "could not update last_checkpoint" in m]
    assert "saved s3://" in error and "/iter_4.pth, but could not update" in error
    assert "failed after 3 attempts" in error and error.endswith("training goes on")
    assert runner.iter == 10
    assert keys(moto_endpoint, bucket) == [
        "iter_10.pth",
        "iter_4.pth",
        "iter_8.pth",
        "last_checkpoint",
    ]


def test_an_old_checkpoint_that_cannot_be_deleted_stays(
    tmp_path, faulty_proxy, bucket, moto_endpoint
):
    deletes = lambda m, p: m == "DELETE" and p.split("?")[0].endswith("/iter_4.pth")  # noqa: E731
    faulty_proxy.fail(deletes, (403, "AccessDenied"), times=None)
    runner = Runner(**s3_cfg(tmp_path, faulty_proxy, bucket, max_keep_ckpts=1))
    with captured_log(runner.logger) as log:
        runner.train()
    (warning,) = [m for m in log.messages if "could not delete" in m]
    assert "the old checkpoint s3://" in warning and "/iter_4.pth: StorageError:" in warning
    assert "AccessDenied" in warning and "left in place (delete it by hand)" in warning
    assert keys(moto_endpoint, bucket) == ["iter_10.pth", "iter_4.pth", "last_checkpoint"]


def test_on_save_error_stop_stops(tmp_path, faulty_proxy, bucket):
    faulty_proxy.fail(put_of("iter_4.pth"), "reset", times=None)
    runner = Runner(**s3_cfg(tmp_path, faulty_proxy, bucket, on_save_error="stop"))
    with pytest.raises(CheckpointSaveError) as info:
        runner.train()
    message = str(info.value)
    assert "could not save" in message and "iter_4.pth at iteration 4" in message
    assert "no earlier checkpoint of this run exists" in message
    assert "training stops (CheckpointHook on_save_error='stop')" in message
    assert not (tmp_path / "last_checkpoint").exists()


def test_on_save_error_is_checked(tmp_path):
    cfg = toy_iter_cfg(
        tmp_path, default_hooks=dict(checkpoint=dict(type="CheckpointHook", on_save_error="halt"))
    )
    with pytest.raises(ValueError, match="on_save_error must be 'continue' or 'stop', got 'halt'"):
        Runner(**cfg).train()


def local_cfg(tmp_path, **hook):
    checkpoint = dict(type="CheckpointHook", interval=4, by_epoch=False, **hook)
    return toy_iter_cfg(
        tmp_path,
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(checkpoint=checkpoint),
    )


def test_a_full_disk_gives_a_clear_error_and_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    from treadle.runner.checkpoint import io

    write = io.write_checkpoint_file

    def full_disk(checkpoint, temporary, fmt, filename):
        if str(filename).endswith("iter_8.pth"):
            with open(temporary, "wb") as file:
                file.write(b"PK\x03\x04 half a checkpoint")
            raise OSError(errno.ENOSPC, "No space left on device", temporary)
        return write(checkpoint, temporary, fmt, filename)

    monkeypatch.setattr(io, "write_checkpoint_file", full_disk)
    runner = Runner(**local_cfg(tmp_path, max_keep_ckpts=1))
    kept = {}
    original = runner.save_checkpoint

    def save_checkpoint(*args, **kwargs):
        if args[1] == "iter_10.pth":  # after the failed save: iter_4 is still there, whole
            kept["iter_4"] = torch.load(tmp_path / "iter_4.pth", weights_only=False)["meta"]
            kept["pointer"] = pointer(tmp_path)
        return original(*args, **kwargs)

    runner.save_checkpoint = save_checkpoint
    with captured_log(runner.logger) as log:
        runner.train()
    (error,) = [m for m in log.messages if "could not save" in m]
    assert f"could not save {tmp_path / 'iter_8.pth'} at iteration 8: no space left" in error
    assert "max_keep_ckpts" in error and "iter_4.pth is intact" in error
    assert kept["iter_4"]["iter"] == 4 and kept["pointer"].endswith("iter_4.pth")
    # No temporary file left, and max_keep_ckpts=1 dropped iter_4 only once iter_10 was saved.
    assert sorted(os.listdir(tmp_path)) == sorted(
        n for n in os.listdir(tmp_path) if not n.endswith(".tmp")
    )
    assert not (tmp_path / "iter_8.pth").exists() and not (tmp_path / "iter_4.pth").exists()
    assert (tmp_path / "iter_10.pth").exists() and pointer(tmp_path).endswith("iter_10.pth")


REAL_DISK = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {support!r})
    from runner_toy_model import toy_iter_cfg
    from treadle.runner.hooks import Hook
    from treadle.runner.runner import Runner

    work = sys.argv[1]

    class FillDisk(Hook):
        priority = "LOWEST"
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter + 1 == 4:  # iter_4.pth is saved: fill what is left
                with open(os.path.join(work, "filler"), "wb", buffering=0) as f:
                    try:
                        while True:
                            f.write(b"x" * 4096)
                    except OSError:
                        pass

    cfg = toy_iter_cfg(work, val_dataloader=None, val_evaluator=None, val_cfg=None,
                       default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=4,
                                                          by_epoch=False, on_save_error="stop")),
                       custom_hooks=[FillDisk()])
    Runner(**cfg).train()
    """
)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare for a private tmpfs")
def test_a_real_full_tmpfs(tmp_path):
    """A 4 MiB tmpfs, mounted in a user namespace of its own: the write fails with ENOSPC."""
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode:
        pytest.skip(f"user namespaces are not available: {probe.stderr.decode().strip()}")
    script = tmp_path / "full.py"
    support = os.path.join(os.path.dirname(__file__), "..", "support")
    script.write_text(REAL_DISK.format(support=os.path.abspath(support)))
    work = tmp_path / "mnt"
    work.mkdir()
    shell = (
        f'mount -t tmpfs -o size=4m none "{work}" && exec "{sys.executable}" "{script}" "{work}"'
    )
    result = subprocess.run(["unshare", "-rm", "sh", "-c", shell], capture_output=True, text=True)
    assert result.returncode != 0
    assert "CheckpointSaveError" in result.stderr, result.stderr[-3000:]
    assert (
        "could not save" in result.stderr
        and "iter_8.pth at iteration 8: no space left" in result.stderr
    )
    assert "the previous checkpoint" in result.stderr and "iter_4.pth is intact" in result.stderr
