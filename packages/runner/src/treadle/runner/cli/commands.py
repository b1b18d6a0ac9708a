"""What ``treadle train``, ``treadle test`` and ``treadle plot`` do once their arguments are
parsed."""

from __future__ import annotations

import argparse
import os
import sys

from treadle.config import Config

from . import runner_factory, startup_gc
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
    if getattr(args, "check", False):
        return run_check(cfg, args.config)
    if _wants_progress_bar(args):
        add_progress_bar(cfg)
    runner = None
    try:
        runner = runner_factory.build_runner(cfg)
        # The engine, the runner and what torch's optimizer will import live as long as the
        # process: frozen before the collector resumes (see startup_gc).
        startup_gc.resume(imports=startup_gc.TRAINING_IMPORTS)
        args.started = True
        runner.train()
    except Exception as error:
        startup_gc.resume()  # the check below builds the config's parts again: collector on
        # Failed before training anything: where --check finds this very error in the config,
        # show it located (config key, file, line) with every other problem, not a traceback.
        if _trained_nothing(runner) and _report_problems(cfg, args.config, error):
            return 1
        raise
    return 0


def _trained_nothing(runner: object) -> bool:
    # Not runner.iter: that builds the train loop, which may be what failed.
    loop = getattr(runner, "_train_loop", None)
    return loop is None or getattr(loop, "iter", 0) == 0


def _text(error: BaseException) -> str:
    text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    return str(text)


def _same(found: BaseException, error: BaseException) -> bool:
    """Whether the check's ``found`` is ``error`` (the Runner may have wrapped it)."""
    mine, theirs = _text(found), _text(error)
    first = mine.splitlines()[0] if mine else ""
    return bool(first) and (first in theirs or theirs.splitlines()[0] in mine)


def _report_problems(cfg: Config, path: str, error: BaseException) -> bool:
    """Print the check's problems when they explain ``error``; False when they do not (the
    caller then shows ``error`` as it is)."""
    from treadle.runner.runner.config_check import check_config

    if type(error).__name__ == "LaunchError":  # the environment, not the config
        return False
    try:
        report = check_config(cfg, filename=os.path.abspath(path))
    except Exception:  # the check itself failed: the original error says more
        return False
    if not any(_same(problem.error, error) for problem in report.problems):
        return False  # not a config problem (or one the check cannot see): as it is
    print(f"treadle train: error: {path}: {report}", file=sys.stderr)
    return True


def run_check(cfg: Config, path: str) -> int:
    """``treadle train --check``: build without training, print every problem; 1 if any."""
    from treadle.runner.runner.config_check import check_config

    report = check_config(cfg, filename=os.path.abspath(path))
    print(f"treadle train --check {path}: {report}")
    return 0 if report.ok else 1


def run_test(args: argparse.Namespace) -> int:
    """Load the config, load the checkpoint's weights and run the test loop."""
    _set_local_rank(args)
    cfg = apply_test_args(load_config(args.config), args)
    if not os.path.exists(args.checkpoint) and "://" not in args.checkpoint:
        raise FileNotFoundError(f"checkpoint not found: {args.checkpoint}")
    if _wants_progress_bar(args):
        add_progress_bar(cfg)
    runner = runner_factory.build_runner(cfg)
    startup_gc.resume()  # the engine and the runner live as long as the process (startup_gc)
    args.started = True
    runner.test()
    return 0


def run_plot(args: argparse.Namespace) -> int:
    """Draw the curves of a work dir's scalars.json as a PNG (treadle.visual's plot): a
    resumed run with the runs it resumed from, unless ``--single-run``."""
    from treadle.visual.plot import plot_file  # matplotlib loads only for this command

    single_run = getattr(args, "single_run", False)
    result = plot_file(args.work_dir, keys=args.keys, out=args.out, single_run=single_run)
    print(result.read_summary())
    print(f"wrote {result.out}: {result.panel_summary()}")
    return 0
