"""tools/mmengine_name_coverage.py: the per-module share of MMEngine's names treadle provides.

The table itself needs MMEngine (``hatch run mmengine:python tools/mmengine_name_coverage.py``);
its rules are tested here on made-up modules.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "tools" / "mmengine_name_coverage.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("mmengine_name_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_module(name: str, source: str, package: bool = False) -> types.ModuleType:
    module = types.ModuleType(name)
    if package:
        module.__path__ = []
    exec(source, module.__dict__)
    return module


def test_all_is_used_where_defined(tool):
    module = make_module("m", "__all__ = ['b', 'a', '_c']\nb = a = _c = 1\nd = 2")
    assert tool.public_names(module) == ["a", "b"]


def test_plain_module_counts_only_what_it_defines(tool):
    source = (
        "from collections import OrderedDict\nimport os\n"
        "DEFAULT_DIR = 'x'\nlowercase_constant = 1\n"
        "def load(): pass\nclass Loader: pass\n"
    )
    module = make_module("plain", source)
    assert tool.public_names(module) == ["DEFAULT_DIR", "Loader", "load"]
    # A package re-exports on purpose: everything public but submodules counts.
    package = make_module("pkg", source, package=True)
    assert tool.public_names(package) == [
        "DEFAULT_DIR",
        "Loader",
        "OrderedDict",
        "load",
        "lowercase_constant",
    ]


def test_provided_follows_name_moves(tool, monkeypatch):
    target = make_module("target", "x = 1")
    assert tool.provided("mmengine.whatever", target, "x")
    assert not tool.provided("mmengine.whatever", target, "y")
    assert not tool.provided("mmengine.whatever", None, "x")
    # ManagerMixin is looked up in treadle.logging, its home.
    assert tool.provided("mmengine.utils", target, "ManagerMixin")


def test_table_with_mmengine(tool, capsys, monkeypatch):
    pytest.importorskip("mmengine")
    monkeypatch.setattr(sys, "argv", ["mmengine_name_coverage.py", "--missing"])
    tool.main()
    out = capsys.readouterr().out
    assert out.startswith("| MMEngine module | treadle module | names | provided | share |")
    assert "| `mmengine.visualization` | `treadle.visual` | 10 | 10 | 100% |" in out
    assert "| **all** |" in out
