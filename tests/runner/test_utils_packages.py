"""Installed packages, prerequisites, versions and the git hash."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys

import pytest

import treadle.runner.utils as utils
from treadle.runner.utils import (
    check_prerequisites,
    digit_version,
    get_git_hash,
    get_installed_path,
    is_installed,
    requires_executable,
    requires_package,
)


def test_is_installed_by_distribution_or_module_name():
    assert is_installed("PyYAML") and is_installed("yaml")
    assert is_installed("pytest")
    assert not is_installed("surely_not_installed_xyz")


def test_get_installed_path_finds_the_package_folder():
    import yaml

    folder = os.path.dirname(yaml.__file__)
    assert get_installed_path("PyYAML") == folder
    assert get_installed_path("yaml") == folder


def test_get_installed_path_of_something_missing():
    with pytest.raises(
        importlib.metadata.PackageNotFoundError, match="'surely_not_installed_xyz' is neither"
    ):
        get_installed_path("surely_not_installed_xyz")


def test_requires_package_runs_the_function_when_present():
    @requires_package(["yaml", "pytest"])
    def present():
        return "ran"

    assert present() == "ran"


def test_requires_package_names_what_is_missing():
    @requires_package(["yaml", "no_pkg_a", "no_pkg_b"])
    def needs_missing():
        raise AssertionError("must not run")

    with pytest.raises(
        RuntimeError,
        match='Prerequisites "no_pkg_a, no_pkg_b" are required in method "needs_missing"',
    ):
        needs_missing()


def test_requires_executable():
    python = os.path.basename(sys.executable)

    @requires_executable(python)
    def present():
        return shutil.which(python)

    @requires_executable("no_such_program_xyz")
    def missing():
        raise AssertionError("must not run")

    assert present()
    with pytest.raises(
        RuntimeError, match='"no_such_program_xyz" are required in method "missing"'
    ):
        missing()


def test_check_prerequisites_checks_at_each_call_with_its_template():
    available = set()

    @check_prerequisites("tool", checker=available.__contains__, msg_tmpl="need {} for {}")
    def work():
        return "done"

    with pytest.raises(RuntimeError, match="need tool for work"):
        work()
    available.add("tool")
    assert work() == "done"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.2", (1, 2, 0, 0, 0, 0)),
        ("0.10.7", (0, 10, 7, 0, 0, 0)),
        ("1.2.3.4.5", (1, 2, 3, 4, 0, 0)),
        ("1.2rc1", (1, 2, 0, 0, -1, 1)),
        ("1.2.0a1", (1, 2, 0, 0, -3, 1)),
        ("1.2b3", (1, 2, 0, 0, -2, 3)),
        ("1.0.0rc0", (1, 0, 0, 0, -1, 0)),
        ("1.3.0.post5", (1, 3, 0, 0, 1, 5)),
        ("1.3.0.dev2", (1, 3, 0, 0, -4, 0)),
        ("2.0.0a1.dev1", (2, 0, 0, 0, -3, 1)),
        ("2.1.0+cu118", (2, 1, 0, 0, 0, 0)),
        ("v1.2", (1, 2, 0, 0, 0, 0)),
    ],
)
def test_digit_version(version, expected):
    assert digit_version(version) == expected


def test_digit_version_orders_releases():
    ordered = ["1.0.dev1", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.post1", "1.0.1", "1.10"]
    assert sorted(ordered, key=digit_version) == ordered


def test_digit_version_length():
    assert digit_version("1.2", length=6) == (1, 2, 0, 0, 0, 0, 0, 0)
    assert digit_version("1.2.3", length=2) == (1, 2, 0, 0)


def test_digit_version_errors():
    with pytest.raises(ValueError, match="digit_version: 'abc' is not a PEP 440 version"):
        digit_version("abc")
    with pytest.raises(TypeError, match="digit_version needs a version string, got int: 3"):
        digit_version(3)


def test_get_git_hash_in_a_checkout(tmp_path, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    run = {"cwd": tmp_path, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)
    (tmp_path / "f").write_text("x")
    subprocess.run(["git", "add", "f"], **run)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"], **run
    )
    sha = subprocess.run(["git", "rev-parse", "HEAD"], text=True, **run).stdout.strip()
    monkeypatch.chdir(tmp_path)
    assert get_git_hash() == sha
    assert get_git_hash(digits=7) == sha[:7]


def test_get_git_hash_outside_a_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert get_git_hash() == "unknown"
    assert get_git_hash(fallback="none") == "none"


def test_get_git_hash_refuses_odd_digits():
    with pytest.raises(TypeError, match="digits must be an int or None, got str: '7'"):
        get_git_hash(digits="7")


def test_every_mmengine_utils_name_is_exported():
    for name in utils.__all__:
        assert getattr(utils, name) is not None, name
