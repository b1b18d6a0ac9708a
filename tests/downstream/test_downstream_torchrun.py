"""mmpretrain's tools/train.py under ``torchrun --nproc-per-node 2 -m treadle.compat`` (gloo).

Two processes train the tiny config to the end with ``--launcher pytorch``; tools/test.py under
the launcher then loads the checkpoint they wrote. There is no MMEngine reference here:
MMEngine 0.10.7's ``init_dist('pytorch')`` calls ``torch.cuda.set_device`` whatever the backend,
so it cannot start on a machine without CUDA.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from downstream_runs import (
    Finished,
    engine_command,
    json_log,
    log_records,
    prepare_folder,
    run,
    scalars,
    skip_without_toolbox,
    timestamp_dirs,
    tools_dir,
    torchrun_command,
    train_losses,
    val_metrics,
)

skip_without_toolbox()

#: 24 training images, batch size 4 per process, 2 processes.
ITERS_PER_EPOCH = 3


@pytest.fixture(scope="module")
def distributed(
    tmp_path_factory: pytest.TempPathFactory, image_root: Path
) -> tuple[Path, Finished, Finished]:
    folder = prepare_folder(tmp_path_factory.mktemp("torchrun"), image_root)
    train = run(
        torchrun_command(
            2,
            tools_dir() / "train.py",
            "tiny_cls.py",
            "--work-dir",
            "work",
            "--launcher",
            "pytorch",
        ),
        folder,
    ).check()
    test = run(
        engine_command(
            "treadle",
            tools_dir() / "test.py",
            "tiny_cls.py",
            "work/epoch_4.pth",
            "--work-dir",
            "tested",
        ),
        folder,
    ).check()
    return folder, train, test


def test_two_processes_train_to_the_end(distributed):
    folder, train, _ = distributed
    (run_dir,) = timestamp_dirs(folder / "work")
    records = log_records(run_dir, folder)
    assert any(
        "Distributed training: True" in line
        for line in (run_dir / f"{run_dir.name}.log").read_text().splitlines()
    )
    losses = train_losses(scalars(run_dir))
    assert sorted(losses) == list(range(1, 4 * ITERS_PER_EPOCH + 1))
    assert sorted(val_metrics(scalars(run_dir))) == [1, 2, 3, 4]
    assert "INFO - Saving checkpoint at 4 epochs" in records
    assert sorted(p.name for p in (folder / "work").glob("*.pth")) == [
        "epoch_2.pth",
        "epoch_3.pth",
        "epoch_4.pth",
    ]
    # Only rank 0 writes the logs: one run folder, no rank-1 text log.
    assert len(list(run_dir.glob("*.log"))) == 1
    assert "Traceback" not in train.output


def test_tools_test_loads_the_distributed_checkpoint(distributed):
    folder, _, test = distributed
    (run_dir,) = timestamp_dirs(folder / "tested")
    assert "Load checkpoint from work/epoch_4.pth" in test.output
    (record,) = json_log(run_dir)
    # The weights trained by two processes reach the accuracy the run validated last.
    (train_dir,) = timestamp_dirs(folder / "work")
    assert record["accuracy/top1"] == val_metrics(scalars(train_dir))[4]
