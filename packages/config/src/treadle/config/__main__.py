"""``python -m treadle.config print CONFIG [--cfg-options k=v ...]`` and ``... diff A B``."""

from __future__ import annotations

import argparse
import sys

from .config import Config, unified_diff
from .dict_action import DictAction
from .errors import ConfigError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m treadle.config", description="Show or compare config files."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("print", help="print a config, bases merged, as Python")
    show.add_argument("config", help="config file (.py, .json, .yaml, .yml or pkg::path)")
    show.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        metavar="KEY=VALUE",
        help="override values, e.g. model.depth=50 data.sizes=[1,2]",
    )
    show.add_argument(
        "--format", choices=("py", "json", "yaml"), default="py", help="output format"
    )
    show.add_argument("--strict", action="store_true", help="fail on keys no base defines")
    diff = commands.add_parser("diff", help="unified diff of two configs")
    diff.add_argument("first")
    diff.add_argument("second")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except ConfigError as err:  # a bad --cfg-options value (DictAction raises, as MMEngine's)
        parser.error(str(err))
    try:
        if args.command == "print":
            cfg = Config.fromfile(args.config, strict=args.strict)
            if args.cfg_options:
                cfg.merge_from_dict(args.cfg_options)
            if args.format == "py":
                sys.stdout.write(cfg.pretty_text)
            else:
                from .formats import dump_json, dump_yaml

                dump = dump_json if args.format == "json" else dump_yaml
                sys.stdout.write(dump(cfg.to_dict()))
        else:
            text = unified_diff(args.first, args.second)
            if text:
                print(text)
            return 1 if text else 0
    except (ConfigError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
