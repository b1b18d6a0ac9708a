"""MMEngine's AST rewriting of pure-Python configs (``ImportTransformer``,
``_gather_abs_import_lazyobj``, ``RemoveAssignFromAST``), for code that runs it on a tree of its
own; treadle's loader compiles configs its own way (pure_program.py)."""

import ast
import os

import pytest

from treadle.config import LazyAttr, LazyObject
from treadle.config.import_transformer import (
    ImportTransformer,
    RemoveAssignFromAST,
    _gather_abs_import_lazyobj,
    _is_builtin_module,
)

CONFIG = """\
import os
import os.path as osp
import lazypkg_demo
import lazypkg_demo.models
import lazypkg_demo.models as models
from collections import OrderedDict as OD
from lazypkg_demo.models import TinyNet, make_optimizer as make_opt
from ._base_.runtime import default_scope as scope
from ._base_.schedule import *

try:
    from surely_missing_pkg_x import Extra
except ImportError:
    raise

net = TinyNet
start = TinyNet.forward
"""


def _run(code: str, base_dict=None, filename="cfg.py"):
    namespace = {"LazyObject": LazyObject}
    transformer = ImportTransformer(namespace, base_dict, filename=filename)
    tree = transformer.visit(ast.parse(code))
    tree, packages = _gather_abs_import_lazyobj(tree, filename=filename)
    exec(compile(ast.fix_missing_locations(tree), filename, "exec"), namespace)
    return namespace, transformer.imported_obj, packages


def test_imports_become_lazy_objects_and_bases_are_bound(demo_packages):
    bases = {"._base_.runtime": {"default_scope": "demo"}, "._base_.schedule": {"lr": 0.1}}
    namespace, imported, packages = _run(CONFIG, bases)
    assert namespace["os"] is os and namespace["osp"] is os.path  # stdlib: imported as it is
    assert namespace["OD"].__name__ == "OrderedDict"
    assert isinstance(namespace["lazypkg_demo"], LazyObject)
    assert namespace["lazypkg_demo"].build().models.TinyNet.__name__ == "TinyNet"
    assert isinstance(namespace["models"], LazyObject) and namespace["models"].dotted == (
        "lazypkg_demo.models"
    )
    assert namespace["net"].dotted == "lazypkg_demo.models.TinyNet"
    assert namespace["net"].location == "cfg.py, line 7"
    assert namespace["make_opt"].dotted == "lazypkg_demo.models.make_optimizer"
    assert isinstance(namespace["start"], LazyAttr)
    assert namespace["start"].module == "lazypkg_demo.models.TinyNet"
    assert isinstance(namespace["Extra"], LazyObject)  # inside try: lazy, the load goes on
    assert namespace["scope"] == "demo" and namespace["lr"] == 0.1
    assert {"osp", "OD", "models", "TinyNet", "make_opt", "Extra"} <= imported
    assert packages == {"lazypkg_demo"}


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("from lazypkg_demo.models import *\n", r"Illegal syntax in config! `from xxx import \*`"),
        ("from os.path import *\n", r"Cannot import \* from non-base config"),
    ],
)
def test_import_star_outside_bases_is_refused(code, message):
    with pytest.raises(RuntimeError, match=f"cfg.py:1: {message}"):
        ImportTransformer({}, filename="cfg.py").visit(ast.parse(code))


def test_several_modules_on_one_line():
    namespace, imported, _ = _run("import json, surely_missing_pkg_x.a as a\n")
    assert namespace["json"].__name__ == "json"
    assert isinstance(namespace["a"], LazyObject) and imported == {"a"}


def test_gather_keeps_stdlib_and_aliased_imports():
    tree, packages = _gather_abs_import_lazyobj(
        ast.parse("import os\nimport pkg_a.x\nimport pkg_a.y\nimport pkg_b\n")
    )
    assert packages == {"pkg_a", "pkg_b"}
    source = ast.unparse(tree)
    assert "pkg_a = LazyObject(['pkg_a.x', 'pkg_a.y'], location='None, line 2')" in source
    assert source.endswith("import os")


def test_remove_assign_from_ast():
    tree = RemoveAssignFromAST("_base_").visit(ast.parse("_base_ = ['a.py']\nx = 1\n"))
    assert ast.unparse(tree) == "x = 1"


def test_is_builtin_module():
    assert _is_builtin_module("os.path") and _is_builtin_module("mmengine.config")
    assert not _is_builtin_module("numpy") and not _is_builtin_module(".base")


def test_same_rewrite_as_mmengine(demo_packages):
    utils = pytest.importorskip("mmengine.config.utils")
    lazy = pytest.importorskip("mmengine.config.lazy")
    bases = {"._base_.runtime": {"default_scope": "demo"}, "._base_.schedule": {"lr": 0.1}}
    # Without the standard library: MMEngine tells it by where its files are, which in a virtual
    # environment is outside the environment's prefix (so it makes `import os` lazy there).
    code = "\n".join(
        line
        for line in CONFIG.splitlines()
        if line.split(" ")[1:2] not in (["os"], ["os.path"], ["collections"])
        and "as models" not in line
    )
    ours, our_imported, our_packages = _run(code, dict(bases))
    theirs = {"LazyObject": lazy.LazyObject}
    transformer = utils.ImportTransformer(theirs, dict(bases), filename="cfg.py")
    tree, packages = utils._gather_abs_import_lazyobj(
        transformer.visit(ast.parse(code)), filename="cfg.py"
    )
    exec(compile(ast.fix_missing_locations(tree), "cfg.py", "exec"), theirs)
    assert our_packages == packages and our_imported == transformer.imported_obj
    for name in ("net", "make_opt", "Extra", "start", "lazypkg_demo"):
        assert str(ours[name]) == str(theirs[name]), name
    assert ours["scope"] == theirs["scope"] and ours["lr"] == theirs["lr"]
