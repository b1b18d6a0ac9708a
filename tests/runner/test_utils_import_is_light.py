"""Importing treadle.runner.utils loads neither torch nor rich (nor treadle.config until its
helper is asked for): checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys


def loaded_after(code: str, modules: list[str]) -> list[str]:
    check = f"{code}; import sys; print([m for m in {modules!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return eval(result.stdout)


def test_importing_utils_is_light():
    heavy = ["torch", "rich", "numpy", "treadle.config"]
    assert loaded_after("import treadle.runner.utils", heavy) == []


def test_a_plain_progress_bar_does_not_load_rich():
    code = (
        "import io; from treadle.runner.utils import track_progress; "
        "track_progress(abs, [1, 2], file=io.StringIO())"
    )
    assert loaded_after(code, ["rich", "torch"]) == []


def test_a_terminal_bar_loads_rich_when_drawn():
    code = (
        "import io; from treadle.runner.utils import ProgressBar; "
        "ProgressBar(1, file=io.StringIO(), force_terminal=True).update()"
    )
    assert loaded_after(code, ["rich"]) == ["rich"]


def test_import_modules_from_strings_comes_from_treadle_config():
    code = (
        "from treadle.runner.utils import import_modules_from_strings as f; import json; f('json')"
    )
    assert loaded_after(code, ["treadle.config"]) == ["treadle.config"]
