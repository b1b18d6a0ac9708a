import os
import sys
import textwrap
from pathlib import Path

import pytest

from treadle.config import Config, ConfigDict

EXPECTED_SIMPLE = {
    "model": {"type": "ResNet", "depth": 50, "norm_cfg": {"type": "BN", "requires_grad": True}},
    "lr": 0.02,
    "flag": False,
    "nothing": None,
    "name": "exp",
}


@pytest.mark.parametrize("name", ["simple.py", "simple.json", "simple.yaml"])
def test_each_format_loads(data, name):
    cfg = Config.fromfile(data / name)
    assert cfg.filename == str(data / name)
    assert {k: cfg.to_dict()[k] for k in EXPECTED_SIMPLE} == EXPECTED_SIMPLE
    assert isinstance(cfg.model.norm_cfg, ConfigDict)
    assert cfg.pipeline[1].type == "Resize"
    assert cfg.mapping["a-b"] == 1
    assert str(data / name) in cfg.text or cfg.text.startswith("# A config")


def test_python_config_keys(data):
    cfg = Config.fromfile(data / "simple.py")
    assert cfg.steps == (8, 11)
    assert cfg._private == 7  # one underscore is kept, as in MMEngine
    assert "__dunder" not in cfg


def test_functions_and_modules_are_not_keys(data):
    assert Config.fromfile(data / "funcs.py").to_dict() == {"value": 42}
    assert Config.fromfile(data / "beyond" / "text_imports.py").to_dict() == {
        "path": os.path.join("a", "b"),
        "sep": os.sep,
    }


def test_four_level_chain_with_delete(data):
    cfg = Config.fromfile(data / "chain" / "level3.py")
    assert cfg.model.backbone.to_dict() == {
        "type": "ResNet",
        "depth": 101,
        "frozen_stages": 1,
        "out_indices": (0, 1, 2, 3),
    }
    assert cfg.model.neck.to_dict() == {"type": "PAFPN", "out_channels": 128}
    assert cfg.model.head.num_classes == 20
    assert cfg.optimizer.to_dict() == {"type": "AdamW", "lr": 1e-4}
    assert cfg.schedule.to_dict() == {"max_epochs": 24, "milestones": [8, 11]}
    assert cfg.data.batch_size == 8 and cfg.data.pipeline[1].prob == 0.5
    assert cfg.work_dir == "./work_dirs/level3"
    # the text holds every file of the chain, each after its path, bases first
    order = [
        cfg.text.index(str(data / "chain" / n)) for n in ("level0.py", "level1.py", "level3.py")
    ]
    assert order == sorted(order)


def test_bases_of_mixed_formats(data):
    cfg = Config.fromfile(data / "mixed" / "child.json")
    assert cfg.model.backbone.depth == 18
    assert cfg.model.head.num_classes == 20
    assert cfg.runtime.to_dict() == {"log_level": "INFO", "seed": 42}
    assert cfg.optimizer.lr == 0.5 and cfg.optimizer.momentum == 0.9
    py_child = Config.fromfile(data / "mixed" / "from_yaml.py")
    assert py_child.data.workers == 1 and py_child.data.batch_size == 2
    assert py_child.runtime.to_dict() == {"log_level": "DEBUG", "seed": 0}


@pytest.mark.parametrize("name", ["whole.py", "whole.yaml", "whole.json"])
def test_base_references_keep_types(data, name):
    cfg = Config.fromfile(data / "refs" / name)
    assert cfg.classes == 80
    assert cfg.train.dataset.to_dict() == {
        "type": "Coco",
        "root": "/data/coco",
        "sizes": [320, 640],
    }


@pytest.mark.parametrize("name", ["in_string.py", "in_string.yaml", "in_string.json"])
def test_base_references_inside_strings(data, name):
    cfg = Config.fromfile(data / "beyond" / name)
    assert cfg.train_root == "/data/coco/train"


def test_base_reference_quoted_and_indexed(data):
    cfg = Config.fromfile(data / "beyond" / "in_string.yaml")
    assert cfg.quoted_whole == 80
    assert cfg.first_size == 320
    assert Config.fromfile(data / "beyond" / "in_string.py").label == "classes: 80"


def test_base_variables_in_python_configs(data):
    cfg = Config.fromfile(data / "refs" / "base_vars.py")
    assert cfg.classes == 100
    assert cfg.sizes == [320, 640, 960]
    assert cfg.half == [160, 320]
    # the child changed the base dict it read: both the key and its alias see it
    assert cfg.dataset.root == "/data/other"
    assert cfg.val.dataset.root == "/data/other"
    assert cfg.val.batch == 2


def test_predefined_variables(data):
    cfg = Config.fromfile(data / "predefined.py")
    assert cfg.work_dir == "./work_dirs/predefined"
    assert cfg.info.to_dict() == {
        "dir": str(data).replace("\\", "/"),
        "base": "predefined.py",
        "ext": ".py",
    }
    assert Config.fromfile(data / "predefined.yaml").ext == ".yaml"
    raw = Config.fromfile(data / "predefined.py", use_predefined_variables=False)
    assert raw.work_dir == "./work_dirs/{{ fileBasenameNoExtension }}"


@pytest.mark.parametrize("name", ["env.py", "env.yaml"])
def test_environment_variables(data, monkeypatch, name):
    monkeypatch.delenv("TREADLE_TEST_DATA_ROOT", raising=False)
    monkeypatch.delenv("TREADLE_TEST_NUM_CLASSES", raising=False)
    cfg = Config.fromfile(data / name)
    assert (cfg.data_root, cfg.num_classes) == ("/default/root/images", 80)
    assert cfg.env_variables == {}
    monkeypatch.setenv("TREADLE_TEST_DATA_ROOT", "/mnt/d")
    monkeypatch.setenv("TREADLE_TEST_NUM_CLASSES", "3")
    cfg = Config.fromfile(data / name)
    assert (cfg.data_root, cfg.num_classes) == ("/mnt/d/images", 3)
    assert cfg.env_variables == {
        "TREADLE_TEST_DATA_ROOT": "/mnt/d",
        "TREADLE_TEST_NUM_CLASSES": "3",
    }


def test_deprecation_notice(data):
    with pytest.warns(
        DeprecationWarning,
        match=r"deprecated\.py will be deprecated.*Please use simple\.py instead.*https://example.org/why",
    ):
        cfg = Config.fromfile(data / "deprecated.py")
    assert "_deprecation_" not in cfg
    with pytest.warns(DeprecationWarning, match="deprecated.py"):
        child = Config.fromfile(data / "deprecated_child.py")
    assert child.to_dict() == {"value": 1, "other": 2}


def test_custom_imports(tmp_path, monkeypatch):
    (tmp_path / "my_plugin_mod.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text(
        "custom_imports = dict(imports=['my_plugin_mod'], allow_failed_imports=False)\n"
    )
    Config.fromfile(cfg_file)
    assert "my_plugin_mod" in sys.modules
    del sys.modules["my_plugin_mod"]
    Config.fromfile(cfg_file, import_custom_modules=False)
    assert "my_plugin_mod" not in sys.modules


def test_custom_imports_failures(tmp_path):
    bad = tmp_path / "cfg.py"
    bad.write_text("custom_imports = dict(imports=['surely_not_a_module_x'])\n")
    with pytest.raises(ImportError, match=r"cannot import 'surely_not_a_module_x'.*sys\.path"):
        Config.fromfile(bad)
    # MMEngine's phrase first, and the file
    with pytest.raises(ImportError, match=r"cfg\.py: Failed to import custom modules from \{"):
        Config.fromfile(bad)
    allowed = tmp_path / "ok.py"
    allowed.write_text(
        "custom_imports = dict(imports=['surely_not_a_module_x'], allow_failed_imports=True)\n"
    )
    with pytest.warns(UserWarning, match="surely_not_a_module_x failed to import"):
        Config.fromfile(allowed)


def test_fromstring_each_format():
    py = Config.fromstring("a = dict(b=1)\nc = [1, 2]\n", ".py")
    yml = Config.fromstring("a:\n  b: 1\nc: [1, 2]\n", ".yaml")
    js = Config.fromstring('{"a": {"b": 1}, "c": [1, 2]}', "json")
    assert py.to_dict() == yml.to_dict() == js.to_dict() == {"a": {"b": 1}, "c": [1, 2]}
    assert py.filename is None and py.text.startswith("a = dict")
    with pytest.warns(UserWarning, match="looks like Python"):
        Config.fromstring("a: dict(b=1)\n", ".yaml")


def test_fromstring_bases_are_relative_to_the_working_directory(data, monkeypatch):
    monkeypatch.chdir(data / "chain")
    cfg = Config.fromstring("_base_ = './level0.py'\noptimizer = dict(lr=1)\n", ".py")
    assert cfg.optimizer.lr == 1 and cfg.optimizer.momentum == 0.9


def test_config_from_dict_and_access():
    cfg = Config(dict(a=dict(b=1)), filename=Path("x.py"))
    assert cfg.filename == "x.py"
    cfg.c = dict(d=2)
    cfg["e"] = 3
    assert isinstance(cfg.c, ConfigDict) and cfg["a"]["b"] == 1
    assert len(cfg) == 3 and sorted(cfg) == ["a", "c", "e"] and "e" in cfg
    assert "Config (path: x.py)" in repr(cfg)
    with pytest.raises(TypeError, match="cfg_dict must be a dict, but got list"):
        Config([1])


@pytest.mark.parametrize("key", ["filename", "text", "pretty_text", "env_variables"])
def test_reserved_keys_are_rejected(key):
    with pytest.raises(KeyError, match=f"{key} is reserved for config file"):
        Config({key: 1})


def test_lazy_import_false_forces_text_style(tmp_path):
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text(
        textwrap.dedent("""
        from collections import OrderedDict as _OD
        a = 1
    """)
    )
    assert Config.fromfile(cfg_file, lazy_import=False).a == 1


def test_lazy_import_false_reads_the_bases_as_text_style_too(tmp_path, demo_packages):
    # As MMEngine passes lazy_import on to the bases: a base that imports a package (which
    # makes it pure-Python) is run as plain Python, its modules dropped.
    (tmp_path / "pure_base.py").write_text("import lazypkg_demo\nb = 2\n")
    mixed = tmp_path / "mixed.py"
    mixed.write_text("_base_ = './pure_base.py'\na = 1\n")
    with pytest.raises(RuntimeError, match=r"mixed\.py:1: .*pure_base\.py is a pure-Python config"):
        Config.fromfile(mixed)
    assert Config.fromfile(mixed, lazy_import=False).to_dict() == {"a": 1, "b": 2}
