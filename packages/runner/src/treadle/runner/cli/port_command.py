"""``treadle port PATH``: rewrite a project's ``mmengine`` imports to treadle's
(treadle.runner.porting)."""

from __future__ import annotations

import argparse


def add_port_command(subcommands: argparse._SubParsersAction) -> None:
    """The ``port`` command."""
    port = subcommands.add_parser(
        "port",
        help="rewrite the mmengine imports of a project to treadle's",
        description="Rewrite the mmengine imports (and the 'mmengine' default scope) of every "
        ".py file under PATH to treadle's, in place; other code is left as it is.",
    )
    port.add_argument("path", metavar="PATH", help="a project folder or one .py file")
    port.add_argument(
        "--dry-run", action="store_true", help="only print what would change; write nothing"
    )
    port.set_defaults(run=run_port)


def run_port(args: argparse.Namespace) -> int:
    """Port ``args.path``; print each rewritten statement, the files that could not be read,
    and a summary."""
    from treadle.runner.porting import port_project  # imported here: only this command needs it

    report = port_project(args.path, dry_run=args.dry_run)
    for change in report.changed:
        for line, old, new in change.statements:
            print(f"{change.path}:{line}: {old}  ->  {new}")
    for path, reason in report.skipped:
        print(f"{path}: skipped ({reason})")
    print(report.summary())
    return 0
