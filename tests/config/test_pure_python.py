import sys

import pytest

from treadle.config import Config, LazyAttr, LazyObject


def test_read_base_and_lazy_imports_load_without_importing(data, demo_packages):
    cfg = Config.fromfile(data / "lazy" / "child.py")
    assert "lazypkg_demo" not in sys.modules
    assert cfg.to_dict() == {
        "model": {"type": "lazypkg_demo.models.TinyNet", "depth": 50, "head": {"num_classes": 100}},
        "optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.01, "momentum": 0.9}},
        "base_train_cfg": {"max_epochs": 12, "val_interval": 1},
        "train_cfg": {"max_epochs": 24, "val_interval": 1},
        "builder": {
            "type": "lazypkg_demo.models.TinyNet",
            "factory": "lazypkg_demo.models.make_optimizer",
        },
    }
    # reading a value builds it: now the package is imported
    from lazypkg_demo.models import TinyNet, make_optimizer

    assert cfg.model.type is TinyNet
    assert cfg.builder.type is TinyNet
    assert cfg.builder.factory is make_optimizer


def test_imported_names_are_hidden_unless_asked(data, demo_packages):
    cfg = Config.fromfile(data / "lazy" / "child.py")
    assert "models" not in cfg.to_dict() and "make_opt" not in cfg.to_dict()
    kept = cfg.to_dict(keep_imported=True)
    assert kept["make_opt"] == "lazypkg_demo.models.make_optimizer"
    assert isinstance(cfg._to_lazy_dict()["model"]["type"], LazyObject)


def test_plain_import_of_a_package(data, demo_packages):
    cfg = Config.fromfile(data / "lazy" / "abs_import.py")
    assert cfg.to_dict() == {"net": {"type": "lazypkg_demo.models.TinyNet"}}
    assert isinstance(cfg._cfg_dict._to_lazy_dict()["net"]["type"], LazyAttr)
    from lazypkg_demo.models import TinyNet

    assert cfg.net.type is TinyNet


def test_lazy_object_build_errors_name_the_import(tmp_path):
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text("from no_such_pkg_zz.mod import Thing\nmodel = dict(type=Thing)\n")
    cfg = Config.fromfile(cfg_file)
    assert cfg.to_dict() == {"model": {"type": "no_such_pkg_zz.mod.Thing"}}
    with pytest.raises(ImportError, match=r"no_such_pkg_zz.*cfg\.py, line 1"):
        _ = cfg.model.type


def test_lazy_objects_cannot_be_called_while_loading(tmp_path):
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text("from no_such_pkg_zz import make\nvalue = make(1)\n")
    with pytest.raises(RuntimeError, match=r"cfg\.py:2: .*no_such_pkg_zz\.make is imported lazily"):
        Config.fromfile(cfg_file)


def test_import_star_outside_read_base_is_rejected(tmp_path):
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text("a = 1\nfrom no_such_pkg_zz import *\n")
    with pytest.raises(
        RuntimeError, match=r"cfg\.py:2: `from no_such_pkg_zz import \*` is allowed only"
    ):
        Config.fromfile(cfg_file)


def test_base_assignment_in_pure_python_config_is_rejected(tmp_path):
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text("from no_such_pkg_zz import A\n_base_ = './x.py'\n")
    with pytest.raises(RuntimeError, match=r"cfg\.py:2: _base_ = \.\.\. cannot be used"):
        Config.fromfile(cfg_file)


def test_other_with_statements_are_rejected(tmp_path):
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text("import contextlib\nwith contextlib.suppress():\n    a = 1\n")
    with pytest.raises(RuntimeError, match=r"cfg\.py:2: only `with read_base\(\):`"):
        Config.fromfile(cfg_file)


def test_missing_name_from_a_base(tmp_path):
    (tmp_path / "base.py").write_text("model = dict(a=1)\n")
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text(
        "from treadle.config import read_base\nwith read_base():\n    from .base import modle\n"
    )
    with pytest.raises(
        KeyError, match=r"cfg\.py:3: base config \.base defines no 'modle' \(did you mean 'model'"
    ):
        Config.fromfile(cfg_file)


def test_read_base_cycle(tmp_path):
    head = "from treadle.config import read_base\nwith read_base():\n"
    (tmp_path / "a.py").write_text(head + "    from .b import *\n")
    (tmp_path / "b.py").write_text(head + "    from .a import *\n")
    with pytest.raises(
        RuntimeError,
        match=r"b\.py:3: base configs import each other: .*a\.py -> .*b\.py -> .*a\.py",
    ):
        Config.fromfile(tmp_path / "a.py")


def test_lazy_object_and_attr():
    obj = LazyObject("collections", "OrderedDict", "cfg.py, line 1")
    assert str(obj) == "OrderedDict" and obj.module == "collections"
    attr = LazyObject("os").path.join
    assert attr.dotted == "os.path.join" and attr.build() is __import__("os").path.join
    several = LazyObject(["json", "json.decoder"])
    assert several.build() is __import__("json")
    with pytest.raises(TypeError, match="module must be a str"):
        LazyObject(1)
    with pytest.raises(ImportError, match="cannot import name 'Nope' from 'collections'"):
        LazyObject("collections", "Nope").build()


def test_lazy_build_errors_say_failed_to_import():
    # MMEngine's phrase, then where the import was written and why it failed
    with pytest.raises(ImportError, match=r"^Failed to import collections\.Nope \(imported in"):
        LazyObject("collections", "Nope", "cfg.py, line 2").build()
    with pytest.raises(
        ImportError, match=r"^Failed to import os\.path\.nope: os\.path has no attribute 'nope'"
    ):
        LazyObject("os").path.nope.build()
    with pytest.raises(
        ImportError, match=r"^Failed to import surely_missing_pkg_x \(imported in cfg\.py, line 3\)"
    ):
        LazyObject("surely_missing_pkg_x", None, "cfg.py, line 3").build()
