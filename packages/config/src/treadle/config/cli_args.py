"""``add_args``: command-line options generated from a config dict (MMEngine's
``mmengine.config.config.add_args``)."""

from __future__ import annotations

import warnings
from argparse import ArgumentParser
from collections.abc import Iterable, Mapping
from typing import Any


def add_args(parser: ArgumentParser, cfg: Mapping[str, Any], prefix: str = "") -> ArgumentParser:
    """Add one ``--key`` option per leaf of ``cfg`` to ``parser`` and return the parser.

    The option's type follows the value's: a string option for ``str``, a ``store_true`` flag for
    ``bool``, ``int`` and ``float`` options, ``nargs='+'`` of the first item's type for other
    iterables (lists, tuples); nested dicts add ``--outer.inner`` options. A value of any other
    type (None, an object) gets no option and a warning.

    Args:
        parser: the parser to add options to.
        cfg: the config (a dict, ConfigDict or Config's dict).
        prefix: put before every option name (``'model.'`` gives ``--model.depth``).

    Example:
        >>> parser = add_args(ArgumentParser(), {'lr': 0.1, 'model': {'depth': 50}})
        >>> parser.parse_args(['--model.depth', '18'])
        Namespace(lr=None, **{'model.depth': 18})
    """
    for key, value in cfg.items():
        option = f"--{prefix}{key}"
        # bool before int: True is an int too, and a flag is what a boolean setting wants.
        if isinstance(value, str):
            parser.add_argument(option)
        elif isinstance(value, bool):
            parser.add_argument(option, action="store_true")
        elif isinstance(value, int):
            parser.add_argument(option, type=int)
        elif isinstance(value, float):
            parser.add_argument(option, type=float)
        elif isinstance(value, Mapping):
            add_args(parser, value, f"{prefix}{key}.")
        elif isinstance(value, Iterable):
            items = iter(value)
            try:
                first = next(items)
            except StopIteration:
                raise ValueError(
                    f"add_args cannot make option {option} from the empty {type(value).__name__} "
                    f"at config key {prefix}{key!s}: the item type is unknown"
                ) from None
            parser.add_argument(option, type=type(first), nargs="+")
        else:
            warnings.warn(
                f"add_args: cannot parse key {prefix}{key} of type {type(value)} (no option added)",
                stacklevel=2,
            )
    return parser
