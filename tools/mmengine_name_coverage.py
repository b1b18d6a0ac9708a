"""For each MMEngine module, the share of its public names that treadle provides.

Run where both are installed: ``hatch run mmengine:python tools/mmengine_name_coverage.py``.
A module's public names are its ``__all__`` (see ``public_names`` where it has none);
treadle provides a name when the treadle module that
``treadle.runner.porting.MODULE_MAP`` maps it to has an attribute of that name (or, for names in
``NAME_MOVES``, the module named there). Prints a Markdown table, then the missing names with
``--missing``.
"""

from __future__ import annotations

import argparse
import importlib
import types
import warnings

from treadle.runner.porting import MODULE_MAP, NAME_MOVES


def public_names(module: types.ModuleType) -> list[str]:
    """``__all__``; without it, a package's public attributes that are not modules, and a plain
    module's public functions, classes and constants defined in it (not what it imports)."""
    names = getattr(module, "__all__", None)
    if names is None:
        is_package = hasattr(module, "__path__")
        names = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and not isinstance(value, types.ModuleType)
            and (is_package or _defined_in(value, name, module))
        ]
    return sorted({name for name in names if not name.startswith("_")})


def _defined_in(value: object, name: str, module: types.ModuleType) -> bool:
    if isinstance(value, type | types.FunctionType):
        return value.__module__ == module.__name__
    return name.isupper()  # a constant such as DEFAULT_CACHE_DIR


def provided(mmengine_module: str, target: types.ModuleType | None, name: str) -> bool:
    home = NAME_MOVES.get((mmengine_module, name))
    try:
        module = importlib.import_module(home) if home else target
    except ImportError:
        return False
    if module is None:
        return False
    try:
        getattr(module, name)
    except Exception:  # AttributeError, or an optional dependency missing behind a lazy name
        return False
    return True


def coverage() -> list[tuple[str, str, int, list[str], str]]:
    """``(mmengine module, treadle module, names, missing names, note)`` for each module."""
    rows = []
    for mmengine_name, treadle_name in sorted(MODULE_MAP.items()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = importlib.import_module(mmengine_name)
        names = public_names(reference)
        note = ""
        try:
            target = importlib.import_module(treadle_name)
        except ImportError as error:
            target, note = None, f"not importable: {error}"
        missing = [name for name in names if not provided(mmengine_name, target, name)]
        rows.append((mmengine_name, treadle_name, len(names), missing, note))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    args = parser.parse_args()
    rows = coverage()
    print("| MMEngine module | treadle module | names | provided | share |")
    print("|---|---|---:|---:|---:|")
    total = have = 0
    for mmengine_name, treadle_name, count, missing, note in rows:
        got = count - len(missing)
        total, have = total + count, have + got
        share = f"{100 * got / count:.0f}%" if count else "-"
        suffix = f" ({note})" if note else ""
        print(f"| `{mmengine_name}` | `{treadle_name}`{suffix} | {count} | {got} | {share} |")
    print(f"| **all** | | {total} | {have} | {100 * have / total:.0f}% |")
    if args.missing:
        print()
        for mmengine_name, _, _, missing, _ in rows:
            if missing:
                print(f"{mmengine_name}: {', '.join(missing)}")


if __name__ == "__main__":
    main()
