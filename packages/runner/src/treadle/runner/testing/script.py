"""check_python_script: run a script as ``__main__`` in this process (so coverage sees it)."""

from __future__ import annotations

import os
import runpy
import shlex
import sys
from unittest import mock

_PYTHON_NAMES = ("python", "python3")


def check_python_script(cmd: str) -> None:
    """Run ``cmd`` (``'path/to/script.py args'`` or ``'python path/to/script.py args'``) in
    this process, as ``python`` would: ``sys.argv`` set, the script's folder first on
    ``sys.path``, ``__name__ == '__main__'``. Exceptions (SystemExit included) propagate.

    Example:
        >>> check_python_script('python tools/train.py configs/toy.py --cfg-options a=1')
    """
    args = shlex.split(cmd)
    if args and (args[0] in _PYTHON_NAMES or args[0] == sys.executable):
        args = args[1:]
    if not args:
        raise ValueError(f"check_python_script: {cmd!r} names no script to run")
    script = args[0]
    if not os.path.isfile(script):
        raise FileNotFoundError(f"check_python_script: no such script {script!r} (from {cmd!r})")
    folder = os.path.dirname(os.path.abspath(script))
    with mock.patch.object(sys, "argv", args), mock.patch.object(sys, "path", [folder, *sys.path]):
        runpy.run_path(script, run_name="__main__")
