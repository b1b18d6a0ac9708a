"""What ``treadle train``, ``treadle test`` and ``treadle plot`` do once their arguments are
parsed."""

from __future__ import annotations

import argparse
import os
import sys

from treadle.config import Config

from . import runner_factory
from .config_edits import add_progress_bar, apply_test_args, apply_train_args


def load_config(path: str) -> Config:
    """Load ``path`` with its folder on ``sys.path``, so a config beside its own modules
    (``custom_imports = dict(imports=['my_model'])``) works from any current directory."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"config file not found: {path}")
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return Config.fromfile(path)


def _wants_progress_bar(args: argparse.Namespace) -> bool:
    if args.progress is not None:
        return args.progress
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def _set_local_rank(args: argparse.Namespace) -> None:
    # torch.distributed.launch passes --local-rank; torchrun sets LOCAL_RANK itself.
    if "LOCAL_RANK" not in os.environ:
        os.environ["LOCAL_RANK"] = str(args.local_rank)


def run_train(args: argparse.Namespace) -> int:
    """Load the config, apply the options, build the runner and train."""
    _set_local_rank(args)
    cfg = apply_train_args(load_config(args.config), args)
    if _wants_progress_bar(args):
        add_progress_bar(cfg)
    runner = runner_factory.build_runner(cfg)
    args.started = True
    runner.train()
    return 0


def run_test(args: argparse.Namespace) -> int:
    """Load the config, load the checkpoint's weights and run the test loop."""
    _set_local_rank(args)
    cfg = apply_test_args(load_config(args.config), args)
    if not os.path.exists(args.checkpoint) and "://" not in args.checkpoint:
        raise FileNotFoundError(f"checkpoint not found: {args.checkpoint}")
    if _wants_progress_bar(args):
        add_progress_bar(cfg)
    runner = runner_factory.build_runner(cfg)
    args.started = True
    runner.test()
    return 0


def run_plot(args: argparse.Namespace) -> int:
    """Draw the curves of a work dir's scalars.json as a PNG (treadle.visual's plot)."""
    from treadle.visual.plot import plot_file  # matplotlib loads only for this command

    result = plot_file(args.work_dir, keys=args.keys, out=args.out)
    print(f"read {result.scalars.path} ({result.scalars.reason})")
    print(f"wrote {result.out}: {len(result.keys)} panels ({', '.join(result.keys)})")
    return 0
