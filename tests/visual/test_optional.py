"""A missing tracker library names the extra that installs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from treadle.visual.optional import import_tracker


def test_present_library_is_returned():
    assert import_tracker("json", "json", "X").dumps([1]) == "[1]"


def test_missing_library_names_the_extra_and_chains_the_cause(monkeypatch):
    monkeypatch.setitem(sys.modules, "fancytracker", None)
    with pytest.raises(
        ImportError,
        match=r"FancyVisBackend needs the 'fancytracker' library.*"
        r"pip install treadle-visual\[fancy\]",
    ) as error:
        import_tracker("fancytracker", "fancy", "FancyVisBackend")
    assert isinstance(error.value.__cause__, ImportError)


def test_importing_treadle_visual_imports_no_tracker_and_no_torch():
    trackers = ["tensorboard", "aim", "mlflow", "wandb", "clearml", "neptune", "dvclive", "torch"]
    code = (
        "import sys, treadle.visual, treadle.visual.backends; "
        f"print([m for m in {trackers!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
