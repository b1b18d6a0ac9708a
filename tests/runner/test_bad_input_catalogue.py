"""The bad-input catalogue: one row per mistake a user can make in a config, across every
section the Runner reads. Each row is written into a config file, loaded with Config.fromfile
and built by ``treadle train --check``'s machinery (a Runner built in full, without training);
the problem must carry the expected exception type, name the config key, the file and the line
of that key, and hold the listed words.

Row: (id, edits to toy_cfg as {dotted key: value or DELETE}, the key the problem names, the
exception type, words its message must contain).
"""

from __future__ import annotations

import copy
import re

import pytest
from runner_toy_model import toy_cfg

from treadle.config import Config
from treadle.runner.runner.config_check import check_config

DELETE = object()
REGISTRY = "is not in the"

CASES = [
    # -- model --
    (
        "model-type",
        {"model.type": "RunnerToyModle"},
        "model",
        KeyError,
        ["RunnerToyModel", REGISTRY],
    ),
    ("model-arg", {"model.with_bnn": True}, "model", TypeError, ["with_bnn"]),
    ("model-str", {"model": "RunnerToyModel"}, "model", TypeError, ["model"]),
    ("model-no-type", {"model": dict(with_bn=True)}, "model", KeyError, ["type"]),
    (
        "model-preprocessor",
        {"model.data_preprocessor": dict(type="NoPreprocessor")},
        "model",
        KeyError,
        ["NoPreprocessor"],
    ),
    ("model-missing", {"model": DELETE}, "model", KeyError, ["has no 'model'"]),
    # -- data --
    (
        "data-type",
        {"train_dataloader.dataset.type": "RunnerToyDatset"},
        "train_dataloader",
        KeyError,
        ["RunnerToyDataset"],
    ),
    (
        "data-empty",
        {"train_dataloader.dataset.length": 0},
        "train_dataloader",
        ValueError,
        ["yields no batch"],
    ),
    (
        "data-sampler",
        {"train_dataloader.sampler.type": "DefaultSamplr"},
        "train_dataloader",
        KeyError,
        ["DefaultSampler"],
    ),
    (
        "data-batch-0",
        {"train_dataloader.batch_size": 0},
        "train_dataloader",
        ValueError,
        ["batch_size"],
    ),
    (
        "data-workers",
        {"train_dataloader.num_workers": -1},
        "train_dataloader",
        ValueError,
        ["num_workers"],
    ),
    (
        "data-shuffle",
        {"train_dataloader.shuffle": True},
        "train_dataloader",
        ValueError,
        ["shuffle"],
    ),
    ("data-arg", {"train_dataloader.bad_arg": 1}, "train_dataloader", TypeError, ["bad_arg"]),
    (
        "data-collate",
        {"train_dataloader.collate_fn": dict(type="no_collate")},
        "train_dataloader",
        KeyError,
        ["no_collate", "FUNCTIONS"],
    ),
    (
        "data-no-sampler",
        {"train_dataloader.sampler": DELETE},
        "train_dataloader",
        KeyError,
        ["has no 'sampler'"],
    ),
    (
        "data-no-dataset",
        {"train_dataloader.dataset": DELETE},
        "train_dataloader",
        KeyError,
        ["has no 'dataset'"],
    ),
    (
        "data-val-type",
        {"val_dataloader.dataset.type": "Nope"},
        "val_dataloader",
        KeyError,
        ["Nope"],
    ),
    (
        "data-test-batch",
        {"test_dataloader.batch_size": -2},
        "test_dataloader",
        ValueError,
        ["batch_size"],
    ),
    (
        "data-int",
        {"train_dataloader": 5},
        "train_dataloader",
        TypeError,
        ["DataLoader or a config dict"],
    ),
    (
        "data-init-fn",
        {"train_dataloader.worker_init_fn": dict(type="nothing")},
        "train_dataloader",
        KeyError,
        ["nothing"],
    ),
    (
        "data-dataset-arg",
        {"train_dataloader.dataset.lenght": 3},
        "train_dataloader",
        TypeError,
        ["lenght"],
    ),
    # -- optim_wrapper --
    (
        "optim-type",
        {"optim_wrapper.optimizer.type": "SDG"},
        "optim_wrapper",
        KeyError,
        ["Did you mean 'SGD'"],
    ),
    (
        "optim-lr",
        {"optim_wrapper.optimizer.lr": -1},
        "optim_wrapper",
        ValueError,
        ["learning rate"],
    ),
    (
        "optim-wrapper-type",
        {"optim_wrapper.type": "OptimWraper"},
        "optim_wrapper",
        KeyError,
        ["OptimWrapper"],
    ),
    (
        "optim-arg",
        {"optim_wrapper.optimizer.momentom": 0.9},
        "optim_wrapper",
        TypeError,
        ["momentom"],
    ),
    (
        "optim-no-optimizer",
        {"optim_wrapper.optimizer": DELETE},
        "optim_wrapper",
        ValueError,
        ["has no 'optimizer'"],
    ),
    (
        "optim-accumulate",
        {"optim_wrapper.accumulative_counts": 0},
        "optim_wrapper",
        ValueError,
        ["accumulative_counts"],
    ),
    (
        "optim-missing",
        {"optim_wrapper": DELETE, "param_scheduler": DELETE},
        "train_dataloader",
        ValueError,
        ["optim_wrapper"],
    ),
    (
        "optim-paramwise",
        {"optim_wrapper.paramwise_cfg": dict(custom_keys="head")},
        "optim_wrapper",
        TypeError,
        ["custom_keys"],
    ),
    (
        "optim-constructor",
        {"optim_wrapper.constructor": "NoConstructor"},
        "optim_wrapper",
        KeyError,
        ["NoConstructor"],
    ),
    # -- param_scheduler --
    (
        "sched-type",
        {"param_scheduler.type": "MultiStepLRR"},
        "param_scheduler",
        KeyError,
        ["MultiStepLR"],
    ),
    ("sched-arg", {"param_scheduler.gama": 0.1}, "param_scheduler", TypeError, ["gama"]),
    (
        "sched-factor",
        {"param_scheduler": dict(type="LinearLR", start_factor=2)},
        "param_scheduler",
        ValueError,
        ["start_factor"],
    ),
    (
        "sched-str",
        {"param_scheduler": "MultiStepLR"},
        "param_scheduler",
        TypeError,
        ["param_scheduler"],
    ),
    (
        "sched-begin-end",
        {"param_scheduler": dict(type="ConstantLR", begin=5, end=2)},
        "param_scheduler",
        ValueError,
        ["begin"],
    ),
    (
        "sched-no-optim",
        {"optim_wrapper": DELETE, "train_dataloader": DELETE, "train_cfg": DELETE},
        "param_scheduler",
        ValueError,
        ["param_scheduler should be None when optim_wrapper is None"],
    ),
    # -- hooks --
    (
        "hook-type",
        {"default_hooks.checkpoint": dict(type="CheckpointHok")},
        "default_hooks.checkpoint",
        KeyError,
        ["CheckpointHook"],
    ),
    (
        "hook-interval",
        {"default_hooks.checkpoint": dict(type="CheckpointHook", interval="1")},
        "default_hooks.checkpoint",
        TypeError,
        ["interval must be an int"],
    ),
    (
        "hook-tmpl",
        {"default_hooks.checkpoint": dict(type="CheckpointHook", filename_tmpl="ep.pth")},
        "default_hooks.checkpoint",
        ValueError,
        ["filename_tmpl"],
    ),
    (
        "hook-save-best",
        {"default_hooks.checkpoint": dict(type="CheckpointHook", save_best=3)},
        "default_hooks.checkpoint",
        TypeError,
        ["save_best"],
    ),
    (
        "hook-on-save-error",
        {"default_hooks.checkpoint": dict(type="CheckpointHook", on_save_error="x")},
        "default_hooks.checkpoint",
        ValueError,
        ["on_save_error"],
    ),
    (
        "hook-logger-arg",
        {"default_hooks.logger.intervall": 1},
        "default_hooks.logger",
        TypeError,
        ["intervall"],
    ),
    (
        "hook-custom-type",
        {"custom_hooks": [dict(type="EMAHok")]},
        "custom_hooks.0",
        KeyError,
        ["EMAHook"],
    ),
    (
        "hook-custom-dict",
        {"custom_hooks": dict(type="EMAHook")},
        "custom_hooks",
        TypeError,
        ["custom_hooks should be a list"],
    ),
    (
        "hook-early-stop",
        {"custom_hooks": [dict(type="EarlyStoppingHook")]},
        "custom_hooks.0",
        TypeError,
        ["monitor"],
    ),
    (
        "hook-second-bad",
        {"custom_hooks": [dict(type="EMAHook"), dict(type="Nope")]},
        "custom_hooks.1",
        KeyError,
        ["Nope"],
    ),
    # -- loops --
    (
        "loop-max-str",
        {"train_cfg.max_epochs": "3"},
        "train_cfg",
        TypeError,
        ["max_epochs must be an int"],
    ),
    ("loop-no-max", {"train_cfg.max_epochs": DELETE}, "train_cfg", KeyError, ["max_epochs"]),
    (
        "loop-type",
        {"train_cfg": dict(type="EpochBasedTrainLop", max_epochs=3)},
        "train_cfg",
        KeyError,
        ["EpochBasedTrainLoop"],
    ),
    (
        "loop-val-interval",
        {"train_cfg.val_interval": 0},
        "train_cfg",
        ValueError,
        ["val_interval must be >= 1"],
    ),
    (
        "loop-nonfinite",
        {"train_cfg.nonfinite_loss": "rollbak"},
        "train_cfg",
        ValueError,
        ["did you mean 'rollback'"],
    ),
    ("loop-arg", {"train_cfg.unknown_arg": 1}, "train_cfg", TypeError, ["unknown_arg"]),
    ("loop-val-type", {"val_cfg": dict(type="ValLop")}, "val_cfg", KeyError, ["ValLoop"]),
    (
        "loop-val-missing",
        {"val_cfg": DELETE},
        "val_dataloader",
        ValueError,
        ["should be either all None or not None: validation needs"],
    ),
    (
        "loop-val-compute-loss",
        {"val_cfg.compute_loss": "yes"},
        "val_cfg",
        TypeError,
        ["compute_loss", "True or False"],
    ),
    ("loop-test-arg", {"test_cfg.bad": 1}, "test_cfg", TypeError, ["bad"]),
    (
        "loop-iters-neg",
        {"train_cfg": dict(by_epoch=False, max_iters=-1)},
        "train_cfg",
        ValueError,
        ["max_iters must be >= 0"],
    ),
    # -- evaluator --
    ("eval-type", {"val_evaluator.type": "NoMetric"}, "val_evaluator", KeyError, ["NoMetric"]),
    ("eval-int", {"val_evaluator": 3}, "val_evaluator", TypeError, ["evaluator must be"]),
    (
        "eval-test-type",
        {"test_evaluator.type": "RunnerToyMetrc"},
        "test_evaluator",
        KeyError,
        ["RunnerToyMetric"],
    ),
    (
        "eval-arg",
        {"val_evaluator.colect_device": "cpu"},
        "val_evaluator",
        TypeError,
        ["colect_device"],
    ),
    # -- visualizer --
    ("vis-type", {"visualizer": dict(type="Visualiser")}, "visualizer", KeyError, ["Visualizer"]),
    (
        "vis-backend",
        {"visualizer": dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend2")])},
        "visualizer",
        KeyError,
        ["LocalVisBackend"],
    ),
    (
        "vis-arg",
        {"visualizer": dict(type="Visualizer", nmae="v")},
        "visualizer",
        TypeError,
        ["nmae"],
    ),
    # -- randomness --
    ("rand-seed", {"randomness.seed": "abc"}, "randomness", TypeError, ["seed"]),
    ("rand-arg", {"randomness.sed": 0}, "randomness", TypeError, ["sed"]),
    # -- env_cfg --
    ("env-str", {"env_cfg": "gloo"}, "env_cfg", TypeError, ["env_cfg must be a dict"]),
    (
        "env-start",
        {"env_cfg.mp_cfg": dict(mp_start_method="forkk")},
        "env_cfg",
        ValueError,
        ["forkk"],
    ),
    # -- launcher --
    ("launcher-torchrun", {"launcher": "torchrun"}, "launcher", ValueError, ["launcher='pytorch'"]),
    ("launcher-typo", {"launcher": "slurmm"}, "launcher", ValueError, ["launcher must be one of"]),
    # -- load_from / resume --
    (
        "load-missing",
        {"load_from": "/nonexistent/ckpt.pth"},
        "load_from",
        FileNotFoundError,
        ["/nonexistent/ckpt.pth"],
    ),
    (
        "resume-missing",
        {"resume": "/nonexistent/x.pth"},
        "resume",
        FileNotFoundError,
        ["/nonexistent/x.pth"],
    ),
    (
        "resume-int",
        {"resume": 3},
        "resume",
        TypeError,
        ["resume must be True, False or a checkpoint path"],
    ),
    # -- the rest the Runner reads --
    (
        "log-processor",
        {"log_processor.type": "LogProcesor"},
        "log_processor",
        KeyError,
        ["LogProcessor"],
    ),
    ("log-processor-arg", {"log_processor.window": 3}, "log_processor", TypeError, ["window"]),
    (
        "auto-scale-lr",
        {"auto_scale_lr": dict(enable=True)},
        "auto_scale_lr",
        KeyError,
        ["base_batch_size"],
    ),
]


def _apply(cfg: dict, edits: dict) -> dict:
    cfg = copy.deepcopy(cfg)
    for dotted, value in edits.items():
        *parents, last = dotted.split(".")
        node = cfg
        for part in parents:
            node = node[part]
        if value is DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    return cfg


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return toy_cfg(tmp_path_factory.mktemp("work"))


# env.py warns about the start method before multiprocessing refuses 'forkk'.
@pytest.mark.filterwarnings("ignore:env_cfg.mp_cfg.mp_start_method")
@pytest.mark.parametrize(
    ("case", "edits", "key", "error", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_input_is_named(tmp_path, base, case, edits, key, error, words):
    path = tmp_path / f"{case}.py"
    Config(_apply(base, edits)).dump(str(path))
    report = check_config(Config.fromfile(str(path)))
    matching = [p for p in report.problems if p.key == key]
    assert matching, f"no problem for {key!r}; found: {report}"
    problem = matching[0]
    assert isinstance(problem.error, error), str(problem)
    text = str(problem)
    for word in words:
        assert word in text, text
    assert problem.filename == str(path)
    if key.split(".")[0] in Config.fromfile(str(path)):
        assert problem.lineno is not None and text.startswith(f"{path}:{problem.lineno}: {key}: ")


def test_the_catalogue_covers_every_section():
    sections = {case[0].split("-")[0] for case in CASES}
    assert {
        "model",
        "data",
        "optim",
        "sched",
        "hook",
        "loop",
        "eval",
        "vis",
        "rand",
        "env",
        "launcher",
        "load",
        "resume",
    } <= sections
    assert len(CASES) >= 60


# `treadle train` never builds the test stage, and takes the launcher from --launcher (whose
# choices argparse checks): those rows are for --check alone.
TRAIN_CASES = [c for c in CASES if not c[2].startswith(("test_", "launcher"))]


@pytest.mark.filterwarnings("ignore:env_cfg.mp_cfg.mp_start_method")
@pytest.mark.parametrize(
    ("case", "edits", "key", "error", "words"), TRAIN_CASES, ids=[c[0] for c in TRAIN_CASES]
)
def test_treadle_train_names_it_too(tmp_path, base, capsys, case, edits, key, error, words):
    """The same config through ``treadle train`` (no --check): it fails before training with
    the same located problem, not a traceback."""
    from treadle.runner.cli.main import main

    path = tmp_path / f"{case}.py"
    Config(_apply(base, edits)).dump(str(path))
    assert main(["train", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"treadle train: error: {path}: " in err
    # The class is named as raised: treadle's own (RunnerConfigKeyError, also MMEngine's
    # AssertionError) ends with the standard name the catalogue gives.
    assert re.search(rf": {re.escape(key)}: \w*{error.__name__}: ", err), err
    for word in words:
        assert word in err, err
