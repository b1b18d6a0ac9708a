"""treadle.runner offers mmengine.runner's checkpoint functions and autocast, loaded lazily."""

import importlib
import subprocess
import sys

import pytest

import treadle.runner


@pytest.mark.parametrize("name", [n for n in treadle.runner.__all__ if n != "__version__"])
def test_each_reexport_is_the_subpackage_object(name):
    source = importlib.import_module(treadle.runner._MODULE_OF[name])
    assert getattr(treadle.runner, name) is getattr(source, name)
    assert name in dir(treadle.runner)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'Runnr'"):
        treadle.runner.Runnr  # noqa: B018


def test_importing_the_package_loads_no_torch():
    code = "import sys, treadle.runner; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "name, base",
    [
        ("NonFiniteLossError", FloatingPointError),
        ("RankFailureError", RuntimeError),
        ("CorruptCheckpointError", ValueError),
        ("CheckpointSaveError", OSError),
    ],
)
def test_the_errors_training_raises_are_caught_by_their_package_name(name, base):
    # A user's `except treadle.runner.X` (or their MMEngine-era `except base`) catches them.
    error = getattr(treadle.runner, name)
    assert issubclass(error, base)
    assert error.__doc__ and "Example" in error.__doc__
