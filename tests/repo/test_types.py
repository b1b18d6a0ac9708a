"""Types that a user's checker sees: mypy, strict, over the packages useful alone, and the
PEP 561 markers that make an installed treadle package typed at all.

The strict check is plain `mypy` in the repository root: `[tool.mypy]` of the root
pyproject.toml names the source trees and the settings. The user's view checks a file outside
the repository against the installed packages, the way a project that depends on treadle sees
them.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

MYPY = pathlib.Path(sys.executable).with_name("mypy")
STRICT_PACKAGES = ("logging", "config", "registry", "fileio")


def run_mypy(args: list[str], cwd: pathlib.Path, cache: pathlib.Path):
    return subprocess.run(
        [str(MYPY), "--cache-dir", str(cache), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def test_every_package_has_a_py_typed_marker(repo_root, package_names):
    for name in package_names:
        marker = repo_root / "packages" / name / "src" / "treadle" / name / "py.typed"
        assert marker.is_file(), f"packages/{name} ships no py.typed (PEP 561)"


def test_light_packages_pass_mypy_strict(repo_root, root_pyproject, tmp_path):
    checked = root_pyproject["tool"]["mypy"]["files"]
    assert checked == [f"packages/{name}/src" for name in STRICT_PACKAGES]
    assert root_pyproject["tool"]["mypy"]["strict"] is True
    result = run_mypy([], cwd=repo_root, cache=tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


USER_CODE = """\
from treadle.config import Config
from treadle.fileio import get_text
from treadle.logging import MessageHub
from treadle.registry import Registry

reveal_type(Config.fromfile)
reveal_type(get_text)
reveal_type(MessageHub.get_current_instance)
reveal_type(Registry("models").build)
"""


def test_a_project_using_the_installed_packages_sees_their_types(tmp_path):
    # No mypy_path, no config: treadle is found in site-packages like any dependency, and
    # without py.typed mypy would answer "missing library stubs or py.typed marker".
    (tmp_path / "user.py").write_text(USER_CODE)
    result = run_mypy(["--strict", "user.py"], cwd=tmp_path, cache=tmp_path / "cache")
    assert "py.typed" not in result.stdout, result.stdout
    revealed = [line for line in result.stdout.splitlines() if "Revealed type" in line]
    assert len(revealed) == 4, result.stdout
    for line in revealed:
        assert "def " in line and '"Any"' not in line, line


def test_planted_type_errors_are_caught(repo_root, tmp_path):
    # The same configuration over a copy of the sources with one wrong return type in each
    # strict package: mypy must report all four (no package is skipped or silenced).
    for name in STRICT_PACKAGES:
        source = repo_root / "packages" / name / "src"
        shutil.copytree(source, tmp_path / "packages" / name / "src")
        planted = tmp_path / "packages" / name / "src" / "treadle" / name / "planted.py"
        planted.write_text("def answer() -> int:\n    return 'forty-two'\n")
    shutil.copy(repo_root / "pyproject.toml", tmp_path)  # its paths are relative
    result = run_mypy([], cwd=tmp_path, cache=tmp_path / "cache")
    assert result.returncode == 1, result.stdout + result.stderr
    for name in STRICT_PACKAGES:
        assert f"treadle/{name}/planted.py:2: error: Incompatible return value" in result.stdout
