"""``python -m treadle.visual COMMAND``: command-line tools of treadle-visual.

Commands:
    plot    draw the curves of a LocalVisBackend's scalars.json as a PNG, one panel per key

Example:
    python -m treadle.visual plot work_dirs/resnet --keys loss,lr --out curves.png
    python -m treadle.visual plot work_dirs/resnet --single-run   # the newest run alone
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

PROG = "python -m treadle.visual"


def build_parser() -> argparse.ArgumentParser:
    """The parser with one subcommand per tool; add a tool with another ``add_parser``."""
    parser = argparse.ArgumentParser(prog=PROG, description="Tools of treadle-visual.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plot = commands.add_parser(
        "plot",
        help="draw the scalars of a LocalVisBackend as a PNG, one panel per key",
        description=(
            "Draw the scalars LocalVisBackend wrote (scalars.json: one JSON object per line) "
            "as a PNG with one panel per key, against the step. Keys that appear in only some "
            "lines (validation metrics logged per epoch) are drawn at their own steps. A "
            "resumed run is drawn with the runs it resumed from, as one history."
        ),
    )
    plot.add_argument(
        "path",
        metavar="WORK_DIR_OR_SCALARS_JSON",
        help=(
            "a scalars.json file, or a directory searched for one: DIR/scalars.json, "
            "DIR/vis_data/scalars.json, then the newest DIR/*/vis_data/scalars.json "
            "(MMEngine's WORK_DIR/TIMESTAMP/vis_data layout), then the newest scalars.json "
            "anywhere below DIR"
        ),
    )
    plot.add_argument(
        "--keys",
        type=_key_list,
        help=(
            "comma-separated keys to draw, in this order (e.g. loss,lr); default: every "
            "numeric key except the counters step, epoch, iter, iteration and global_step "
            "(also as the last part of a key such as train/epoch)"
        ),
    )
    plot.add_argument(
        "--out",
        help="the PNG to write; default: curves.png next to the scalars.json read",
    )
    plot.add_argument(
        "--single-run",
        action="store_true",
        help=(
            "draw the run of the scalars.json read alone; by default a resumed run is drawn "
            "with the runs it resumed from (their resumed_from.json records), as one history"
        ),
    )
    plot.set_defaults(run=_run_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command in ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
    try:
        return arguments.run(arguments)
    except (OSError, ValueError) as error:
        # The user's input was wrong (missing path, bad line, unknown key): one line, no trace.
        print(f"{PROG} {arguments.command}: error: {error}", file=sys.stderr)
        return 1


def _run_plot(arguments: argparse.Namespace) -> int:
    from .plot import plot_file  # matplotlib loads only for this command

    result = plot_file(
        arguments.path, keys=arguments.keys, out=arguments.out, single_run=arguments.single_run
    )
    print(result.read_summary())
    print(f"wrote {result.out}: {result.panel_summary()}")
    return 0


def _key_list(text: str) -> list[str]:
    keys = [key.strip() for key in text.split(",") if key.strip()]
    if not keys:
        raise argparse.ArgumentTypeError(f"expected comma-separated key names, got {text!r}")
    return keys


if __name__ == "__main__":
    sys.exit(main())
