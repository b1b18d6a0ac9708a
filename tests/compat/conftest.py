"""Fixtures of the treadle-compat tests: the import hook installed for one test, then removed
with every ``mmengine`` module it made, so tests do not leak it into each other. Where the real
MMEngine is installed (hatch env mmengine) and an earlier test imported it, its modules are put
aside for the test and back afterwards."""

import sys

import pytest

import treadle.compat


def _real_mmengine_modules() -> dict:
    return {
        name: module
        for name, module in sys.modules.items()
        if name == "mmengine" or name.startswith("mmengine.")
    }


@pytest.fixture
def compat():
    real = _real_mmengine_modules()
    for name in real:
        del sys.modules[name]
    treadle.compat.install()
    yield treadle.compat
    treadle.compat.uninstall()
    sys.modules.update(real)


@pytest.fixture
def no_mmengine_modules():
    real = _real_mmengine_modules()
    for name in real:
        del sys.modules[name]
    yield
    sys.modules.update(real)
