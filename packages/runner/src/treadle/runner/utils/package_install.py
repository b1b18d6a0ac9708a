"""``call_command`` and ``install_package``: MMEngine's helpers that pip-install a package."""

from __future__ import annotations

import subprocess
import sys

from .packages import is_installed


def call_command(cmd: list[str]) -> None:
    """Run ``cmd`` (a list of arguments, no shell); raise ``subprocess.CalledProcessError``,
    whose message shows the command, when it fails.

    Example:
        >>> call_command([sys.executable, '-c', 'pass'])
    """
    if isinstance(cmd, str) or not isinstance(cmd, list | tuple):
        raise TypeError(
            f"call_command takes a list of arguments, got {type(cmd).__name__}: {cmd!r} "
            "(split a command line with shlex.split)"
        )
    subprocess.run(list(cmd), check=True)


def install_package(package: str) -> None:
    """``pip install package`` unless it is installed already.

    Unlike MMEngine, which runs whatever ``python`` is first on PATH, pip runs for the
    interpreter that is running this code, so the package lands where it will be imported.

    Example:
        >>> install_package('pip')  # already installed: nothing is run
    """
    if not isinstance(package, str) or not package:
        raise TypeError(f"install_package takes a package name, got {package!r}")
    if not is_installed(package):
        call_command([sys.executable, "-m", "pip", "install", package])
