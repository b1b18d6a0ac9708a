"""The examples in treadle.runner.analysis's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "treadle.runner.analysis",
    "treadle.runner.analysis.complexity_analysis",
    "treadle.runner.analysis.handles",
    "treadle.runner.analysis.model_analysis",
    "treadle.runner.analysis.op_table",
    "treadle.runner.analysis.print_helper",
    "treadle.runner.analysis.recorder",
    "treadle.runner.analysis.tables",
    "treadle.runner.analysis.values",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.failed == 0
