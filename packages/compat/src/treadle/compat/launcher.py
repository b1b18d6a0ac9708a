"""The launcher: install the hook, then run a script or module as ``__main__``, with
``sys.argv`` and ``sys.path`` as ``python SCRIPT ARGS`` / ``python -m MODULE ARGS`` set them."""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys

from .finder import install

USAGE = (
    "usage: python -m treadle.compat SCRIPT [ARGS...]\n"
    "       python -m treadle.compat -m MODULE [ARGS...]\n"
    "       torchrun [OPTIONS] -m treadle.compat SCRIPT [ARGS...]\n"
    "Runs SCRIPT (or MODULE) with every `import mmengine` resolved to treadle."
)


def main(argv: list[str] | None = None) -> int:
    """Run what ``argv`` (default ``sys.argv[1:]``) names; returns the exit status of a usage
    error (the script's own exit raises SystemExit as usual).

    Example:
        >>> main(['train.py', 'config.py', '--work-dir', 'out'])  # doctest: +SKIP
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    if args[0] == "-m":
        if len(args) < 2:
            print(f"treadle.compat: -m needs a module name\n{USAGE}", file=sys.stderr)
            return 2
        return _run_module(args[1], args[2:])
    if args[0].startswith("-m") and len(args[0]) > 2:  # -mpackage.module, as python accepts
        return _run_module(args[0][2:], args[1:])
    if args[0].startswith("-"):
        print(f"treadle.compat: unknown option {args[0]!r}\n{USAGE}", file=sys.stderr)
        return 2
    return _run_script(args[0], args[1:])


def _run_script(script: str, rest: list[str]) -> int:
    if not os.path.exists(script):
        print(
            f"treadle.compat: cannot run {script!r}: no such file "
            f"(looked in {os.path.abspath(script)!r}, from the working directory "
            f"{os.getcwd()!r})",
            file=sys.stderr,
        )
        return 2
    install()
    sys.argv = [script, *rest]
    # `python SCRIPT` puts the script's folder first on sys.path; `python -m treadle.compat`
    # put the working directory there instead.
    folder = os.path.dirname(os.path.abspath(script))
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path[0] = folder
    else:
        sys.path.insert(0, folder)
    runpy.run_path(script, run_name="__main__")
    return 0


def _run_module(module: str, rest: list[str]) -> int:
    install()
    try:
        spec = importlib.util.find_spec(module)
    except ImportError as error:  # a parent package is missing
        spec, why = None, str(error)
    else:
        why = f"No module named {module!r}"
    if spec is None:
        print(
            f"treadle.compat: cannot run module {module!r}: {why} (searched from the working "
            f"directory {os.getcwd()!r} and the installed packages)",
            file=sys.stderr,
        )
        return 2
    # runpy puts the module's file in argv[0]; sys.path already starts with the working
    # directory, as `python -m MODULE` has it, since this launcher was started with -m too.
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0
