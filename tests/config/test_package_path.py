import sys

import pytest

from treadle.config import Config


def test_fromfile_with_a_package_path(demo_packages):
    cfg = Config.fromfile("cfgpkg_demo::models/net.py")
    assert cfg.to_dict() == {"model": {"type": "Net", "depth": 18}}
    assert "cfgpkg_demo" not in sys.modules  # found without importing it


def test_bases_from_a_package_get_its_scope(demo_packages):
    cfg = Config.fromfile(demo_packages / "uses_package.py")
    assert cfg.to_dict() == {
        "log_level": "INFO",
        "default_hooks": {
            "logger": {"type": "LoggerHook", "interval": 50, "_scope_": "cfgpkg_demo"}
        },
        "model": {"type": "Net", "depth": 50, "_scope_": "cfgpkg_demo"},
    }


def test_read_base_from_a_package(demo_packages):
    cfg = Config.fromfile(demo_packages / "pure_from_package.py")
    assert cfg.to_dict() == {"model": {"type": "Net", "depth": 101}}


def test_package_path_errors(demo_packages):
    with pytest.raises(FileNotFoundError, match="package 'no_such_pkg_zz' is not installed"):
        Config.fromfile("no_such_pkg_zz::a/b.py")
    with pytest.raises(
        FileNotFoundError, match=r"no such config in package 'cfgpkg_demo' \(looked in .*\.mim"
    ):
        Config.fromfile("cfgpkg_demo::models/missing.py")
    with pytest.raises(FileNotFoundError, match="not a package config path"):
        Config.fromfile("::a.py")


def test_bad_package_base_names_the_line(tmp_path, demo_packages):
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text("x = 1\n_base_ = ['cfgpkg_demo::nope.py']\n")
    with pytest.raises(
        FileNotFoundError, match=r"cfg\.py:2: 'cfgpkg_demo::nope\.py': no such config"
    ):
        Config.fromfile(cfg_file)
