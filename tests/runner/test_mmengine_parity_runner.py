"""treadle.runner.Runner against MMEngine 0.10.7's Runner: the same config (toy model, data,
SGD, a MultiStepLR, validation with a metric, fixed seed, CPU) trained by both gives the same
loss at every iteration, the same learning rates, checkpoints with MMEngine's keys and equal
tensors (treadle's own keys beside them), the same log lines once timings are taken out, and
the same ``scalars.json`` keys apart from the timing ones (treadle may give val/test timings
keys of their own, so that the loss curve does not mix them with training's). Each side also
resumes the other's checkpoint and goes on exactly as the uninterrupted run.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``; the comparisons skip
until ``treadle.runner.runner.Runner`` exists.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mmengine")

import torch
from torch import nn

SEED = 0
SAMPLES, BATCH = 24, 4  # 6 iterations per epoch
EPOCHS = 2
ITERS, ITER_VAL_INTERVAL = 10, 5
LOSS_TOLERANCE = 1e-6

# --------------------------------------------------------------------------------------------
# One toy of each kind, defined once over the side's base classes.


class ToyData(torch.utils.data.Dataset):
    """Points in 3-d with one of 2 labels, from their own generator (both sides: the same)."""

    def __init__(self, seed: int = 1) -> None:
        self.metainfo = {"classes": ("a", "b")}
        generator = torch.Generator().manual_seed(seed)
        self.inputs = torch.randn(SAMPLES, 3, generator=generator)
        self.labels = (self.inputs.sum(dim=1) > 0).long()

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"inputs": self.inputs[index], "labels": self.labels[index]}


def make_model(base_model: type) -> nn.Module:
    class ToyNet(base_model):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))

        def forward(self, inputs: torch.Tensor, labels: torch.Tensor, mode: str = "tensor"):
            logits = self.net(inputs)
            if mode == "loss":
                return {
                    "loss_ce": nn.functional.cross_entropy(logits, labels),
                    "loss_l2": 1e-3 * logits.pow(2).mean(),
                }
            if mode == "predict":
                return [{"pred": logits.argmax(dim=1), "labels": labels}]
            return logits

    torch.manual_seed(SEED)
    return ToyNet()


def make_metric(base_metric: type) -> Any:
    class ToyAccuracy(base_metric):
        default_prefix = "toy"

        def process(self, data_batch: Any, data_samples: Any) -> None:
            for sample in data_samples:
                correct = (sample["pred"] == sample["labels"]).sum().item()
                self.results.append((correct, len(sample["labels"])))

        def compute_metrics(self, results: list) -> dict[str, float]:
            return {"accuracy": 100.0 * sum(c for c, _ in results) / sum(n for _, n in results)}

    return ToyAccuracy()


def make_loss_recorder(hook_base: type, losses: list[float], lrs: list[float]) -> Any:
    class LossRecorder(hook_base):
        priority = "LOWEST"

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
            losses.append(float(outputs["loss"].detach()))
            lrs.append(runner.optim_wrapper.param_groups[0]["lr"])

    return LossRecorder()


def loader(shuffle: bool) -> dict:
    return dict(
        dataset=ToyData(),
        batch_size=BATCH,
        num_workers=0,
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        collate_fn=dict(type="default_collate"),
    )


def config(work_dir: Path, by_epoch: bool) -> dict:
    """Everything but the side's own objects (model, metric, hooks)."""
    if by_epoch:
        train_cfg = dict(by_epoch=True, max_epochs=EPOCHS, val_interval=1)
        scheduler = dict(type="MultiStepLR", by_epoch=True, milestones=[1], gamma=0.1)
        checkpoint = dict(type="CheckpointHook", interval=1)
    else:
        train_cfg = dict(by_epoch=False, max_iters=ITERS, val_interval=ITER_VAL_INTERVAL)
        scheduler = dict(type="MultiStepLR", by_epoch=False, milestones=[4], gamma=0.1)
        checkpoint = dict(type="CheckpointHook", interval=ITER_VAL_INTERVAL, by_epoch=False)
    return dict(
        work_dir=str(work_dir),
        train_dataloader=loader(shuffle=True),
        val_dataloader=loader(shuffle=False),
        train_cfg=train_cfg,
        val_cfg=dict(),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9, weight_decay=1e-4)),
        param_scheduler=scheduler,
        default_hooks=dict(logger=dict(type="LoggerHook", interval=2), checkpoint=checkpoint),
        log_processor=dict(by_epoch=by_epoch),
        randomness=dict(seed=SEED),
    )


def train_mmengine(work_dir: Path, by_epoch: bool, **extra: Any) -> dict:
    from mmengine.evaluator import BaseMetric
    from mmengine.hooks import Hook
    from mmengine.model import BaseModel
    from mmengine.runner import Runner

    return train_with(Runner, BaseModel, BaseMetric, Hook, work_dir, by_epoch, "mmengine", extra)


def treadle_runner() -> type:
    module = pytest.importorskip("treadle.runner.runner")
    if not hasattr(module, "Runner"):
        pytest.skip("treadle.runner.runner has no Runner yet")
    return module.Runner


def train_treadle(work_dir: Path, by_epoch: bool, **extra: Any) -> dict:
    runner_class = treadle_runner()
    from treadle.runner.evaluator import BaseMetric
    from treadle.runner.hooks import Hook
    from treadle.runner.model import BaseModel

    return train_with(
        runner_class, BaseModel, BaseMetric, Hook, work_dir, by_epoch, "treadle", extra
    )


def train_with(
    runner_class, base_model, base_metric, hook, work_dir, by_epoch, name, extra
) -> dict:
    """Train one side (``extra``: more Runner arguments, e.g. ``load_from`` and ``resume``);
    what it left: losses, lrs, log file lines, scalars, checkpoints."""
    losses: list[float] = []
    lrs: list[float] = []
    runner = runner_class(
        model=make_model(base_model),
        val_evaluator=[make_metric(base_metric)],
        custom_hooks=[make_loss_recorder(hook, losses, lrs)],
        experiment_name=f"parity-runner-{name}-{'epoch' if by_epoch else 'iter'}",
        **config(work_dir, by_epoch),
        **extra,
    )
    runner.train()
    (log_file,) = work_dir.glob("*/*.log")
    (scalars,) = work_dir.glob("*/vis_data/scalars.json")
    return {
        "losses": losses,
        "lrs": lrs,
        "log": log_file.read_text().splitlines(),
        "scalars": [json.loads(line) for line in scalars.read_text().splitlines()],
        "checkpoints": sorted(path.name for path in work_dir.glob("*.pth")),
        "work_dir": work_dir,
    }


# --------------------------------------------------------------------------------------------
# Comparing what the two sides left.

# "2026/11/23 13:21:10 - mmengine - INFO - " in the file ("11/23 ..." on the console).
PREFIX = re.compile(r"^\S+ \S+ - \S+ - [A-Z]+ - ")
# val_time/test_time (issue 20): treadle's val/test epoch line ends with how long the pass took.
TIMINGS = re.compile(r"\s*\b(eta|time|data_time|memory|val_time|test_time): \S+")
ENGINE_LINE = re.compile(r"^((Epoch|Iter)\((train|val|test)\)|Saving checkpoint at )")


def engine_lines(lines: list[str]) -> list[str]:
    """The log processor's lines, without the logger's prefix and without timings."""
    found = []
    for line in lines:
        text = PREFIX.sub("", line)
        if ENGINE_LINE.match(text):
            found.append(re.sub(r"\s+", " ", TIMINGS.sub("", text)).strip())
    return found


def is_timing(key: str) -> bool:
    return key.rsplit("/", 1)[-1] in {"time", "data_time", "eta", "memory"}


def scalar_keys(records: list[dict]) -> list[set[str]]:
    return [{key for key in record if not is_timing(key)} for record in records]


def load(path: Path) -> dict:
    # The two checkpoints are read back in this test's own process: both are trusted.
    return torch.load(path, map_location="cpu", weights_only=False)


def assert_same_tensors(mine: Any, theirs: Any, where: str) -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, torch.Tensor), where
        torch.testing.assert_close(mine, theirs, rtol=0, atol=LOSS_TOLERANCE, msg=where)
    elif isinstance(theirs, dict):
        assert set(theirs) <= set(mine), f"{where}: missing {set(theirs) - set(mine)}"
        for key in theirs:
            assert_same_tensors(mine[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, (list, tuple)):
        assert len(mine) == len(theirs), where
        for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            assert_same_tensors(a, b, f"{where}[{index}]")
    elif isinstance(theirs, float):
        assert mine == pytest.approx(theirs, abs=LOSS_TOLERANCE), where
    else:
        assert mine == theirs, where


def history(buffer: Any) -> list[float]:
    """A HistoryBuffer's values: MMEngine pickles the object, treadle saves a plain dict."""
    if isinstance(buffer, dict):
        return [float(value) for value in buffer["log_history"]]
    return [float(value) for value in buffer._log_history]


def assert_same_message_hub(mine: dict, theirs: dict, name: str) -> None:
    assert set(theirs) <= set(mine), f"{name}: message_hub keys"
    assert set(mine["log_scalars"]) == set(theirs["log_scalars"]), f"{name}: log_scalars"
    for key, buffer in theirs["log_scalars"].items():
        if is_timing(key):
            continue
        assert history(mine["log_scalars"][key]) == pytest.approx(
            history(buffer), abs=LOSS_TOLERANCE
        ), f"{name}: message_hub log_scalars[{key!r}]"
    for key in ("epoch", "iter", "max_epochs", "max_iters", "seed", "dataset_meta"):
        assert mine["runtime_info"][key] == theirs["runtime_info"][key], f"runtime_info.{key}"


MODES = [pytest.param(True, id="epoch-based"), pytest.param(False, id="iter-based")]


@pytest.fixture(scope="module")
def mmengine_runs(tmp_path_factory) -> dict[bool, dict]:
    return {
        by_epoch: train_mmengine(tmp_path_factory.mktemp("mmengine"), by_epoch)
        for by_epoch in (True, False)
    }


@pytest.fixture(scope="module")
def treadle_runs(tmp_path_factory) -> dict[bool, dict]:
    treadle_runner()
    return {
        by_epoch: train_treadle(tmp_path_factory.mktemp("treadle"), by_epoch)
        for by_epoch in (True, False)
    }


@pytest.mark.parametrize("by_epoch", MODES)
def test_mmengine_side_trains_as_the_harness_expects(mmengine_runs, by_epoch):
    """The reference run itself: the right number of losses, lines and checkpoints."""
    run = mmengine_runs[by_epoch]
    steps = EPOCHS * SAMPLES // BATCH if by_epoch else ITERS
    assert len(run["losses"]) == steps
    assert run["lrs"][0] == pytest.approx(0.1) and run["lrs"][-1] == pytest.approx(0.01)
    lines = engine_lines(run["log"])
    assert any(line.startswith("Epoch(train)" if by_epoch else "Iter(train)") for line in lines)
    assert any(line.startswith("Epoch(val)" if by_epoch else "Iter(val)") for line in lines)
    expected = ["epoch_1.pth", "epoch_2.pth"] if by_epoch else ["iter_10.pth", "iter_5.pth"]
    assert run["checkpoints"] == expected


@pytest.mark.parametrize("by_epoch", MODES)
def test_same_loss_and_lr_at_every_iteration(mmengine_runs, treadle_runs, by_epoch):
    theirs, mine = mmengine_runs[by_epoch], treadle_runs[by_epoch]
    assert len(mine["losses"]) == len(theirs["losses"])
    for step, (a, b) in enumerate(zip(mine["losses"], theirs["losses"], strict=True)):
        assert a == pytest.approx(b, abs=LOSS_TOLERANCE), f"loss at iteration {step + 1}"
    assert mine["lrs"] == pytest.approx(theirs["lrs"], abs=1e-12)


@pytest.mark.parametrize("by_epoch", MODES)
def test_same_log_lines_apart_from_timings(mmengine_runs, treadle_runs, by_epoch):
    theirs = engine_lines(mmengine_runs[by_epoch]["log"])
    mine = engine_lines(treadle_runs[by_epoch]["log"])
    assert theirs, "MMEngine logged no line of its log processor"
    assert mine == theirs


@pytest.mark.parametrize("by_epoch", MODES)
def test_same_scalars_json_keys_apart_from_timings(mmengine_runs, treadle_runs, by_epoch):
    theirs = mmengine_runs[by_epoch]["scalars"]
    # Difference (issue 20): treadle's validation lines also hold the training iteration as
    # "iter" (the x axis of `treadle plot`); MMEngine's have none. Train lines match as they are.
    val_lines = [record for record in treadle_runs[by_epoch]["scalars"] if "loss" not in record]
    assert val_lines and all(isinstance(record.get("iter"), int) for record in val_lines)
    mine = [
        {key: value for key, value in record.items() if "loss" in record or key != "iter"}
        for record in treadle_runs[by_epoch]["scalars"]
    ]
    assert scalar_keys(mine) == scalar_keys(theirs)
    assert [record["step"] for record in mine] == [record["step"] for record in theirs]
    for a, b in zip(mine, theirs, strict=True):
        for key in b:
            if not is_timing(key) and key != "step":
                assert a[key] == pytest.approx(b[key], abs=1e-4), key


@pytest.mark.parametrize("by_epoch", MODES)
def test_same_checkpoint_files_keys_and_tensors(mmengine_runs, treadle_runs, by_epoch):
    theirs, mine = mmengine_runs[by_epoch], treadle_runs[by_epoch]
    assert mine["checkpoints"] == theirs["checkpoints"]
    for name in theirs["checkpoints"]:
        reference = load(theirs["work_dir"] / name)
        checkpoint = load(mine["work_dir"] / name)
        expected = {"meta", "state_dict", "optimizer", "param_schedulers", "message_hub"}
        assert expected <= set(reference)
        assert expected <= set(checkpoint), f"{name} lacks {expected - set(checkpoint)}"
        assert_same_tensors(checkpoint["state_dict"], reference["state_dict"], "state_dict")
        assert_same_tensors(checkpoint["optimizer"], reference["optimizer"], "optimizer")
        assert_same_tensors(
            checkpoint["param_schedulers"], reference["param_schedulers"], "param_schedulers"
        )
        # experiment_name and time differ by design (each side was given its own name).
        for key in ("epoch", "iter", "seed", "dataset_meta"):
            assert checkpoint["meta"][key] == reference["meta"][key], f"{name}: meta.{key}"
        assert_same_message_hub(checkpoint["message_hub"], reference["message_hub"], name)


@pytest.mark.parametrize("by_epoch", MODES)
def test_last_checkpoint_names_the_newest_file(mmengine_runs, treadle_runs, by_epoch):
    for run in (mmengine_runs[by_epoch], treadle_runs[by_epoch]):
        last = (run["work_dir"] / "last_checkpoint").read_text().strip()
        newest = max(run["checkpoints"], key=lambda name: int(re.sub(r"\D", "", name)))
        assert Path(last).name == newest


# A checkpoint of one side, resumed by the other: the rest of the training is the same as the
# uninterrupted run's (at an epoch's end, and in the middle of an epoch for the iteration-based
# loop). treadle reads MMEngine's checkpoint through its migration; MMEngine reads treadle's.
MIDWAY = [
    pytest.param(True, "epoch_1.pth", id="epoch-based"),
    pytest.param(False, f"iter_{ITER_VAL_INTERVAL}.pth", id="iter-based"),
]


def assert_continues(resumed: dict, uninterrupted: dict) -> None:
    count = len(resumed["losses"])
    assert 0 < count < len(uninterrupted["losses"])
    expected = uninterrupted["losses"][-count:]
    for step, (a, b) in enumerate(zip(resumed["losses"], expected, strict=True)):
        assert a == pytest.approx(b, abs=LOSS_TOLERANCE), f"loss at resumed iteration {step + 1}"
    assert resumed["lrs"] == pytest.approx(uninterrupted["lrs"][-count:], abs=1e-12)


@pytest.mark.parametrize(("by_epoch", "checkpoint"), MIDWAY)
def test_treadle_resumes_an_mmengine_checkpoint(mmengine_runs, tmp_path, by_epoch, checkpoint):
    reference = mmengine_runs[by_epoch]
    path = str(reference["work_dir"] / checkpoint)
    resumed = train_treadle(tmp_path, by_epoch, load_from=path, resume=True)
    assert_continues(resumed, reference)


@pytest.mark.parametrize(("by_epoch", "checkpoint"), MIDWAY)
def test_mmengine_resumes_a_treadle_checkpoint(treadle_runs, tmp_path, by_epoch, checkpoint):
    reference = treadle_runs[by_epoch]
    path = str(reference["work_dir"] / checkpoint)
    resumed = train_mmengine(tmp_path, by_epoch, load_from=path, resume=True)
    assert_continues(resumed, reference)
