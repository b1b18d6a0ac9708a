"""Resume that starts at once: a run resumed from a checkpoint written early (10%) or late (90%)
in an epoch loads no batch it has already trained on. Every item the train data set loads is
written to a log, so the tests count the reads between the resume and the first new iteration
(the same small number at 10% and at 90%: the first batch, plus what the DataLoader's workers
read ahead) and over the whole resumed run (exactly the samples still to train on).

Epoch-based (mid-epoch) and iteration-based loops, 0 and 2 workers, a checkpoint without a
loop state (MMEngine's), ``treadle train --resume``; and the control: a sampler that cannot
save its position is replayed, and the log sees it.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
from resume_start_toys import FirstIterMark, read_indices
from runner_toy_model import toy_cfg, unique_name
from torch.utils.data import DataLoader

from treadle.runner.cli.main import main
from treadle.runner.dataset import pseudo_collate
from treadle.runner.runner import Runner

SAMPLES, BATCH = 60, 3
PER_EPOCH = SAMPLES // BATCH  # 20 iterations an epoch
EARLY, LATE = 2, 18  # 10% and 90% of the first epoch
PREFETCH_FACTOR = 2  # torch's default: batches each worker reads ahead

EPOCHS = dict(by_epoch=True, max_epochs=2)
ITERS = dict(by_epoch=False, max_iters=2 * PER_EPOCH)


def _cfg(work_dir: Path, train_cfg: dict, num_workers: int = 0, shuffle: bool = False) -> dict:
    """Train RunnerToyModel on 60 logged samples, batch 3, no validation, a checkpoint every 2
    iterations, the first-iteration mark in the custom hooks."""
    read_log = work_dir / "reads.log"
    loader = dict(
        dataset=dict(type="ResumeStartReadLogDataset", read_log=str(read_log), length=SAMPLES),
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        batch_size=BATCH,
        num_workers=num_workers,
    )
    return toy_cfg(
        work_dir,
        train_dataloader=loader,
        val_dataloader=None,
        val_cfg=None,
        val_evaluator=None,
        train_cfg=dict(train_cfg),
        param_scheduler=dict(type="MultiStepLR", milestones=[10], by_epoch=False),
        log_processor=dict(window_size=1, by_epoch=train_cfg["by_epoch"]),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=PER_EPOCH),
            checkpoint=dict(type="CheckpointHook", interval=2, by_epoch=False),
        ),
        custom_hooks=[dict(type="ResumeStartFirstIterMark", read_log=str(read_log))],
        experiment_name=unique_name("resume_start"),
    )


def _train(cfg: dict) -> FirstIterMark:
    """Train; the run's first-iteration mark."""
    Runner(**copy.deepcopy(cfg)).train()
    return FirstIterMark.marks[-1]


def _resume(tmp_path: Path, name: str, cfg_of, checkpoint: Path) -> tuple[FirstIterMark, list]:
    work_dir = tmp_path / name
    mark = _train(cfg_of(work_dir) | dict(load_from=str(checkpoint), resume=True))
    return mark, read_indices(work_dir / "reads.log")


def _most_read_before_first_step(num_workers: int) -> int:
    """The first batch; with workers, also the batches they read ahead (taking the first
    batch asks them for one more)."""
    return BATCH * (1 + PREFETCH_FACTOR * num_workers)


def _check_no_replay(mark: FirstIterMark, reads: list[int], at: int, passes: int) -> None:
    position = at * BATCH
    assert mark.iteration == at
    # Before the first new iteration: only samples not trained yet (no sampler shuffles here).
    before = reads[: mark.reads]
    assert before and min(before) >= position, before
    # The rest of the epoch, each sample once, then whole passes: nothing read twice.
    rest = SAMPLES - position
    assert sorted(reads[:rest]) == list(range(position, SAMPLES))
    assert len(reads) == rest + (passes - 1) * SAMPLES


@pytest.fixture(scope="module", params=[0, 2], ids=["0 workers", "2 workers"])
def num_workers(request) -> int:
    return request.param


@pytest.mark.parametrize("train_cfg", [EPOCHS, ITERS], ids=["epoch-based", "iter-based"])
def test_resume_reads_the_same_few_items_at_10_and_90_percent(tmp_path, train_cfg, num_workers):
    def cfg_of(work_dir: Path) -> dict:
        return _cfg(work_dir, train_cfg, num_workers)

    full = _train(cfg_of(tmp_path / "full"))
    full_reads = read_indices(tmp_path / "full" / "reads.log")
    assert full.iteration == 0 and len(full_reads) == 2 * SAMPLES

    early, early_reads = _resume(tmp_path, "early", cfg_of, tmp_path / "full" / f"iter_{EARLY}.pth")
    late, late_reads = _resume(tmp_path, "late", cfg_of, tmp_path / "full" / f"iter_{LATE}.pth")
    _check_no_replay(early, early_reads, EARLY, passes=2)
    _check_no_replay(late, late_reads, LATE, passes=2)
    # The start does not grow with the position in the epoch.
    bound = _most_read_before_first_step(num_workers)
    assert early.reads <= bound and late.reads <= bound
    if num_workers == 0:
        assert early.reads == late.reads == full.reads == BATCH


def test_shuffled_resume_reads_the_epoch_order_from_the_saved_position(tmp_path):
    def cfg_of(work_dir: Path) -> dict:
        return _cfg(work_dir, EPOCHS, shuffle=True)

    _train(cfg_of(tmp_path / "full"))
    full_reads = read_indices(tmp_path / "full" / "reads.log")
    mark, reads = _resume(tmp_path, "late", cfg_of, tmp_path / "full" / f"iter_{LATE}.pth")
    assert mark.reads == BATCH
    # The same permutation as the uninterrupted run, from sample 54 on; then epoch 2's.
    assert reads == full_reads[LATE * BATCH :]


def test_checkpoint_without_loop_state_resumes_without_replay(tmp_path):
    # MMEngine's checkpoints hold only the counters: the position follows from them.
    def cfg_of(work_dir: Path) -> dict:
        return _cfg(work_dir, ITERS)

    _train(cfg_of(tmp_path / "full"))
    checkpoint = torch.load(tmp_path / "full" / f"iter_{LATE}.pth", weights_only=False)
    assert checkpoint.pop("loop")["sampler"]["position"] == LATE * BATCH
    stripped = tmp_path / "mmengine_style.pth"
    torch.save(checkpoint, stripped)
    mark, reads = _resume(tmp_path, "late", cfg_of, stripped)
    assert mark.reads == BATCH
    _check_no_replay(mark, reads, LATE, passes=2)


def test_treadle_train_resume_reads_no_trained_batch(tmp_path):
    def cfg_of(work_dir: Path) -> dict:
        return _cfg(work_dir, ITERS)

    _train(cfg_of(tmp_path / "full"))
    cfg = cfg_of(tmp_path / "cli")
    config = tmp_path / "resume_cfg.py"
    config.write_text("".join(f"{key} = {value!r}\n" for key, value in cfg.items()))
    checkpoint = tmp_path / "full" / f"iter_{LATE}.pth"
    work_dir = tmp_path / "cli"
    argv = ["train", str(config), "--resume", str(checkpoint), "--work-dir", str(work_dir)]
    assert main([*argv, "--no-progress"]) == 0
    mark = FirstIterMark.marks[-1]
    assert mark.reads == BATCH
    _check_no_replay(mark, read_indices(work_dir / "reads.log"), LATE, passes=2)


def test_a_sampler_without_a_position_is_replayed_and_the_log_shows_it(tmp_path):
    # The control: torch's SequentialSampler cannot save where it stands, so the loop loads
    # the batches already trained on (with a warning); the read log counts every one of them.
    def cfg_of(work_dir: Path) -> dict:
        cfg = _cfg(work_dir, EPOCHS)
        dataset = Runner.build_dataloader(cfg["train_dataloader"]).dataset
        cfg["train_dataloader"] = DataLoader(dataset, batch_size=BATCH, collate_fn=pseudo_collate)
        return cfg

    _train(cfg_of(tmp_path / "full"))
    mark, reads = _resume(tmp_path, "late", cfg_of, tmp_path / "full" / f"iter_{LATE}.pth")
    assert mark.iteration == LATE
    # The 18 batches trained before the checkpoint, then the first new one.
    assert mark.reads == (LATE + 1) * BATCH
    assert reads == list(range(SAMPLES)) * 2
    (log,) = (tmp_path / "late").glob("*/*.log")
    assert "cannot save its position: skipping the 18 batch(es)" in log.read_text()


def test_iter_loop_replays_a_sampler_without_a_position_in_its_pass(tmp_path):
    # 24 iterations: the checkpoint at 22 is 2 batches into the second pass over the data.
    def cfg_of(work_dir: Path) -> dict:
        cfg = _cfg(work_dir, dict(by_epoch=False, max_iters=PER_EPOCH + 4))
        dataset = Runner.build_dataloader(cfg["train_dataloader"]).dataset
        cfg["train_dataloader"] = DataLoader(dataset, batch_size=BATCH, collate_fn=pseudo_collate)
        return cfg

    _train(cfg_of(tmp_path / "full"))
    mark, reads = _resume(tmp_path, "late", cfg_of, tmp_path / "full" / f"iter_{PER_EPOCH + 2}.pth")
    assert mark.iteration == PER_EPOCH + 2
    assert mark.reads == 3 * BATCH
    assert reads == list(range(4 * BATCH))
