"""treadle.runner.cli: the ``treadle`` command (train, test, plot).

Example:
    >>> from treadle.runner.cli import build_parser
    >>> build_parser().parse_args(['train', 'cfg.py', '--resume']).resume
    'auto'
"""

from __future__ import annotations

from .main import build_parser, main

__all__ = ["build_parser", "main"]
