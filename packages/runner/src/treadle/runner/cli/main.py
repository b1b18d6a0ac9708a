"""``treadle COMMAND``: train, test and plot from a config, as MMEngine projects' tools/*.py.

Commands:
    train CONFIG [--check] [--work-dir D] [--resume [CKPT]] [--amp] [--auto-scale-lr]
                 [--cfg-options k=v ...] [--launcher none|pytorch|slurm|mpi]
    test CONFIG CHECKPOINT [--work-dir D] [--out FILE.pkl] [--cfg-options k=v ...]
    plot WORK_DIR [--keys loss,accuracy/top1] [--out curves.png] [--single-run]
    checkpoint consolidate SHARDED_DIR OUT.(pth|safetensors) [--weights-only]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from treadle.config import ConfigError, DictAction
from treadle.runner.utils.launch_error import LaunchError

from . import commands, startup_gc
from .checkpoint_command import add_checkpoint_command
from .config_edits import CommandError
from .port_command import add_port_command

PROG = "treadle"
LAUNCHERS = ("none", "pytorch", "slurm", "mpi")

# What a user can get wrong before training starts (a path, a config key, a type name): shown as
# one line naming it. Errors raised while training keep their traceback.
USER_ERRORS = (
    CommandError,
    ConfigError,
    LaunchError,
    OSError,
    KeyError,
    ValueError,
    TypeError,
    ImportError,
)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by train and test."""
    parser.add_argument(
        "--work-dir",
        help="where logs and checkpoints go (default: the "
        "config's work_dir, else ./work_dirs/CONFIG_NAME)",
    )
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        metavar="KEY=VALUE",
        help="override config keys, e.g. train_cfg.max_epochs=5 'optim_wrapper.optimizer.lr=0.1'",
    )
    parser.add_argument(
        "--launcher",
        choices=LAUNCHERS,
        default="none",
        help="how the processes were started (default: none, one process)",
    )
    parser.add_argument("--local-rank", "--local_rank", type=int, default=0, help=argparse.SUPPRESS)
    bar = parser.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="draw the live progress bar even when stdout is not a terminal",
    )
    bar.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="never draw the progress bar (plain log lines only)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser with one subcommand per tool."""
    parser = argparse.ArgumentParser(prog=PROG, description="Train, test and plot with treadle.")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = subcommands.add_parser(
        "train",
        help="train a model from a config file",
        description="Train a model from a config file.",
    )
    train.add_argument("config", help="the config file (.py, .json, .yaml)")
    train.add_argument(
        "--resume",
        nargs="?",
        const="auto",
        metavar="CKPT",
        help="resume from CKPT exactly (resume=True, load_from=CKPT), unless the work dir "
        "holds newer checkpoints of a run that started from CKPT with the same config: the "
        "same command run again after a preemption goes on from the newest of them; without "
        "CKPT, from the newest complete checkpoint of the work dir (a fresh start, with a "
        "warning, when it has none)",
    )
    train.add_argument(
        "--amp",
        action="store_true",
        help="automatic mixed precision (AmpOptimWrapper, dynamic loss scale)",
    )
    train.add_argument(
        "--auto-scale-lr",
        action="store_true",
        help="scale the learning rate by the real batch size over the config's "
        "auto_scale_lr.base_batch_size",
    )
    train.add_argument(
        "--check",
        action="store_true",
        help="build everything the run needs (model, data, optimizer, schedulers, hooks, "
        "loops, evaluators...) without training, and report every problem at once with its "
        "config key and line; exit status 1 when there is one",
    )
    _add_run_options(train)
    train.set_defaults(run=commands.run_train)

    test = subcommands.add_parser(
        "test",
        help="test a checkpoint with a config file",
        description="Test a checkpoint with a config file.",
    )
    test.add_argument("config", help="the config file (.py, .json, .yaml)")
    test.add_argument("checkpoint", help="the checkpoint to test (a path or a URL)")
    test.add_argument("--out", help="also dump the predictions to this .pkl file")
    _add_run_options(test)
    test.set_defaults(run=commands.run_test)

    plot = subcommands.add_parser(
        "plot",
        help="draw the loss and metric curves of a work dir as a PNG",
        description="Draw the scalars of a work dir's newest vis_data/scalars.json as a PNG, "
        "one panel per key (treadle.visual's plot). A resumed run is drawn with the runs it "
        "resumed from, as one history on the iteration axis.",
    )
    plot.add_argument("work_dir", metavar="WORK_DIR", help="a work dir or a scalars.json file")
    plot.add_argument(
        "--keys", type=_key_list, help="comma-separated keys to draw (default: every measured key)"
    )
    plot.add_argument("--out", help="the PNG to write (default: curves.png beside scalars.json)")
    plot.add_argument(
        "--single-run",
        action="store_true",
        help="draw the newest run alone, not with the runs it resumed from",
    )
    plot.set_defaults(run=commands.run_plot)
    add_checkpoint_command(subcommands)
    add_port_command(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command in ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    if argv is None:
        # Started as the command (the `treadle` script, `python -m treadle.runner`): the process
        # is ours, so its start-up may skip garbage collection (see startup_gc). Called from
        # Python code with arguments, the caller's process is left as it is.
        startup_gc.pause()
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except ConfigError as error:  # a bad --cfg-options value (DictAction raises, as MMEngine's)
            parser.error(str(error))
        try:
            return args.run(args)
        except USER_ERRORS as error:
            if getattr(args, "started", False):
                raise  # raised while training or testing: a bug or a data problem, keep the trace
            print(f"{PROG} {args.command}: error: {_describe(error)}", file=sys.stderr)
            return 1
    finally:
        startup_gc.resume()


def _describe(error: BaseException) -> str:
    # KeyError's str() quotes its message; show the message itself.
    text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    return f"{type(error).__name__}: {text}"


def _key_list(text: str) -> list[str]:
    keys = [key.strip() for key in text.split(",") if key.strip()]
    if not keys:
        raise argparse.ArgumentTypeError(f"expected comma-separated key names, got {text!r}")
    return keys


if __name__ == "__main__":
    sys.exit(main())
