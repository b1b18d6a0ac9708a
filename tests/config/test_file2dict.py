"""``Config._file2dict`` and ``Config._get_cfg_path``: MMEngine's private loading steps, which
toolboxes and research code call directly (checked against MMEngine 0.10.7's results)."""

import os

import pytest

from treadle.config import Config, ConfigDict


@pytest.fixture
def child(tmp_path):
    (tmp_path / "base.py").write_text("a = 1\nb = dict(c=2)\n")
    path = tmp_path / "child.py"
    path.write_text(
        "_base_ = ['./base.py']\nb = dict(d=3)\n"
        "home = '{{$TREADLE_T_VAR:zz}}'\nname = '{{ fileBasenameNoExtension }}'\n"
    )
    return path


def test_file2dict_gives_values_text_and_env(child, monkeypatch):
    monkeypatch.setenv("TREADLE_T_VAR", "hello")
    cfg_dict, text, env = Config._file2dict(str(child))
    assert type(cfg_dict) is dict
    assert cfg_dict == {"a": 1, "b": {"c": 2, "d": 3}, "home": "hello", "name": "child"}
    assert isinstance(cfg_dict["b"], ConfigDict)
    base = child.parent / "base.py"
    assert text == f"{base}\n{base.read_text()}\n{child}\n{child.read_text()}"
    assert env == {"TREADLE_T_VAR": "hello"}


def test_file2dict_without_substitutions(child, monkeypatch):
    monkeypatch.delenv("TREADLE_T_VAR", raising=False)
    cfg_dict, _, env = Config._file2dict(child, False, False)
    assert cfg_dict["home"] == "{{$TREADLE_T_VAR:zz}}"
    assert cfg_dict["name"] == "{{ fileBasenameNoExtension }}"
    assert env == {}
    assert Config._file2dict(child)[2] == {}  # a default used is no variable read


def test_file2dict_refuses_a_pure_python_config(tmp_path):
    (tmp_path / "base.py").write_text("a = 1\n")
    lazy = tmp_path / "lazy.py"
    lazy.write_text(
        "from treadle.config import read_base\nwith read_base():\n    from .base import *\n"
    )
    with pytest.raises(RuntimeError, match="must match the current configuration file type"):
        Config._file2dict(lazy)


def test_file2dict_errors_are_mmengines_types(tmp_path):
    with pytest.raises(FileNotFoundError, match="config file not found"):
        Config._file2dict(tmp_path / "missing.py")
    (tmp_path / "cfg.txt").write_text("a = 1\n")
    with pytest.raises(OSError, match=r"unsupported config extension '\.txt'"):
        Config._file2dict(tmp_path / "cfg.txt")


def test_get_cfg_path_joins_a_local_path_unchecked():
    path, scope = Config._get_cfg_path("../x/base.py", "/cfgs/a/child.py")
    assert (path, scope) == (os.path.join("/cfgs/a", "../x/base.py"), None)


def test_get_cfg_path_of_a_package_config_has_its_scope(demo_packages):
    path, scope = Config._get_cfg_path("cfgpkg_demo::models/net.py", "/cfgs/child.py")
    assert scope == "cfgpkg_demo"
    assert os.path.isfile(path) and path.endswith(os.path.join("models", "net.py"))
    with pytest.raises(FileNotFoundError, match="package 'no_such_pkg_zz' is not installed"):
        Config._get_cfg_path("no_such_pkg_zz::a/b.py", "/cfgs/child.py")
