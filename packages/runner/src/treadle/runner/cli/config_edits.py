"""How the options of ``treadle train`` and ``treadle test`` change the config, as the
tools/train.py and tools/test.py of MMEngine projects do. Plain functions over a Config, so
they are tested without building a Runner."""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from treadle.config import Config
from treadle.logging import print_log


class CommandError(Exception):
    """A command-line option that cannot be applied to the config; printed as one line."""


def default_work_dir(config_path: str) -> str:
    """``./work_dirs/<config file name without suffix>``, MMEngine projects' default."""
    return os.path.join("./work_dirs", os.path.splitext(os.path.basename(config_path))[0])


def apply_common(cfg: Config, args: argparse.Namespace) -> None:
    """``--launcher``, ``--cfg-options`` and ``--work-dir`` (option > config > default)."""
    cfg.launcher = args.launcher
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get("work_dir") is None:
        cfg.work_dir = default_work_dir(args.config)


def enable_amp(cfg: Config) -> None:
    """Turn the config's ``OptimWrapper`` into an ``AmpOptimWrapper`` with a dynamic loss scale
    (bfloat16 autocast on a CPU, float16 on CUDA: the wrapper picks the device's default)."""
    optim_wrapper = cfg.get("optim_wrapper")
    if not isinstance(optim_wrapper, dict):
        raise CommandError("--amp: the config has no optim_wrapper dict to turn into AMP")
    kind = optim_wrapper.get("type", "OptimWrapper")
    if kind == "AmpOptimWrapper":
        print_log(
            "--amp: AMP training is already enabled in the config.",
            logger="current",
            level=logging.WARNING,
        )
        return
    if kind != "OptimWrapper":
        raise CommandError(
            f"--amp works only with optim_wrapper.type='OptimWrapper', but the config has "
            f"optim_wrapper.type={kind!r}"
        )
    optim_wrapper["type"] = "AmpOptimWrapper"
    optim_wrapper["loss_scale"] = "dynamic"


def enable_auto_scale_lr(cfg: Config) -> None:
    """Switch on the config's ``auto_scale_lr`` (it must name ``base_batch_size``)."""
    auto_scale_lr = cfg.get("auto_scale_lr")
    if not isinstance(auto_scale_lr, dict) or "base_batch_size" not in auto_scale_lr:
        raise CommandError(
            "--auto-scale-lr needs auto_scale_lr = dict(enable=False, base_batch_size=N) in the "
            f"config (the batch size the learning rate was tuned for); found {auto_scale_lr!r}"
        )
    auto_scale_lr["enable"] = True


def apply_train_args(cfg: Config, args: argparse.Namespace) -> Config:
    """Apply every option of ``treadle train`` to ``cfg`` (in place) and return it."""
    apply_common(cfg, args)
    if args.amp:
        enable_amp(cfg)
    if args.auto_scale_lr:
        enable_auto_scale_lr(cfg)
    if args.resume == "auto":
        # The latest complete checkpoint of work_dir; load_from is ignored as MMEngine does.
        cfg.resume = True
        cfg.load_from = None
    elif args.resume is not None:
        # That checkpoint exactly, as MMEngine's tools/train.py, unless a requeued run of the
        # same command saved newer ones (treadle.runner.runner.named_resume).
        cfg.resume = True
        cfg.load_from = args.resume
    return cfg


def apply_test_args(cfg: Config, args: argparse.Namespace) -> Config:
    """Apply every option of ``treadle test`` to ``cfg`` (in place) and return it."""
    apply_common(cfg, args)
    cfg.load_from = args.checkpoint
    cfg.resume = False
    if args.out is not None:
        cfg.test_evaluator = with_dump_metric(cfg.get("test_evaluator"), args.out)
    return cfg


def with_dump_metric(test_evaluator: Any, out: str) -> Any:
    """``test_evaluator`` with a ``DumpResults`` metric added that writes the predictions to
    ``out`` (a .pkl or .pickle path on any treadle.fileio backend)."""
    if not out.endswith((".pkl", ".pickle")):
        raise CommandError(f"--out must be a .pkl or .pickle file, got {out!r}")
    dump = {"type": "DumpResults", "out_file_path": out}
    if test_evaluator is None:
        raise CommandError("--out: the config has no test_evaluator to add the dump to")
    if isinstance(test_evaluator, (list, tuple)):
        return [*test_evaluator, dump]
    if isinstance(test_evaluator, dict) and "metrics" in test_evaluator:
        metrics = test_evaluator["metrics"]
        metrics = list(metrics) if isinstance(metrics, (list, tuple)) else [metrics]
        return {**test_evaluator, "metrics": [*metrics, dump]}
    if isinstance(test_evaluator, dict):
        return [test_evaluator, dump]
    raise CommandError(
        f"--out: test_evaluator must be a dict or a list of dicts, got "
        f"{type(test_evaluator).__name__}"
    )


def add_progress_bar(cfg: Config) -> None:
    """Add a ``ProgressBarHook`` to ``custom_hooks`` unless the config has one."""
    hooks = list(cfg.get("custom_hooks") or [])
    if not any(isinstance(h, dict) and h.get("type") == "ProgressBarHook" for h in hooks):
        hooks.append({"type": "ProgressBarHook"})
    cfg.custom_hooks = hooks
