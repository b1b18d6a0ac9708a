"""The minimum-versions test: each package with the oldest siblings its ranges allow.

On the real checkout, a package whose oldest allowed siblings are all their current versions
is exactly the install tests/repo/test_single_package_install.py runs, so it is skipped here
(today every package: no sibling has a second release yet); the others run their tests with
the old siblings built from tags: in CI those without torch (seconds each), and with
TREADLE_RELEASE_FULL=1 (or `hatch run release:minimum`) all of them. The machinery itself is
proved on a scratch family of two tiny packages, where a range that claims more than the code
supports must fail.
"""

from __future__ import annotations

import os
import pathlib
import textwrap

import pytest
from release_minimum import minimum_versions_run, oldest_siblings
from release_scratch import REPO_ROOT, ScratchRepo, git, run_tool
from release_wheels import workspace_pins
from release_workspace import ReleaseError, installed_closure, read_packages

PACKAGES = read_packages(REPO_ROOT)
FULL = os.environ.get("TREADLE_RELEASE_FULL") == "1"


@pytest.fixture(scope="module")
def current_wheels(tmp_path_factory) -> pathlib.Path:
    """The working tree's wheels, built once for every package that needs them."""
    return tmp_path_factory.mktemp("current-wheels")


@pytest.mark.parametrize("folder", list(PACKAGES))
def test_package_passes_its_tests_with_its_oldest_siblings(folder, current_wheels, tmp_path):
    package = PACKAGES[folder]
    oldest = oldest_siblings(REPO_ROOT, package, PACKAGES)
    if all(old.is_current for old in oldest):
        pytest.skip("oldest allowed siblings are the current ones: test_single_package_install")
    if "torch" in installed_closure(package, PACKAGES) and not FULL:
        # A fresh torch install and the package's whole suite: over the CI budget of the
        # release checks. `hatch run release:minimum` runs it before a release (RELEASING.md).
        pytest.skip("needs torch (minutes): hatch run release:minimum, or TREADLE_RELEASE_FULL=1")
    pins = workspace_pins(REPO_ROOT, ("torch", "pytest"))
    result = minimum_versions_run(
        REPO_ROOT, package, PACKAGES, tmp_path, pins, wheelhouse=current_wheels
    )
    shown = ", ".join(map(str, oldest))
    assert result.returncode == 0, f"with {shown}:\n{result.stdout[-6000:]}\n{result.stderr}"


# A family of two packages: alpha 0.1.0 (tagged) has f(); alpha 0.2.0 adds g(); beta uses g().
PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.27"]
build-backend = "hatchling.build"

[project]
name = "treadle-{name}"
dynamic = ["version"]
description = "A scratch package."
readme = "README.md"
requires-python = ">=3.10"
license = "Apache-2.0"
dependencies = [{dependencies}]

[tool.hatch.version]
path = "src/treadle/{name}/__init__.py"

[tool.hatch.build.targets.wheel]
packages = ["src/treadle"]
"""


def write_package(root: pathlib.Path, name: str, version: str, code: str, deps: str = ""):
    folder = root / "packages" / name
    (folder / "src" / "treadle" / name).mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(PYPROJECT.format(name=name, dependencies=deps))
    (folder / "README.md").write_text(f"# treadle-{name}\n")
    (folder / "CHANGELOG.md").write_text(f"# Changelog\n\n## {version}\n\n- Scratch.\n")
    init = f'__version__ = "{version}"\n\n' + textwrap.dedent(code)
    (folder / "src" / "treadle" / name / "__init__.py").write_text(init)


@pytest.fixture
def family(tmp_path) -> ScratchRepo:
    root = tmp_path / "family"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = ["--import-mode=importlib"]\n'
    )
    (root / "hatch.toml").write_text(f'[envs.default]\ndependencies = ["{pytest_pin()}"]\n')
    write_package(root, "alpha", "0.1.0", "def f():\n    return 1\n")
    git(root, "init", "--quiet", "--initial-branch=main")
    repo = ScratchRepo(root)
    repo.commit("alpha 0.1.0")
    repo.tag("alpha", "0.1.0")
    write_package(root, "alpha", "0.2.0", "def f():\n    return 1\n\ndef g():\n    return 2\n")
    write_package(
        root,
        "beta",
        "0.1.0",
        "from treadle.alpha import g\n\ndef h():\n    return g()\n",
        deps='"treadle-alpha>=0.1.0,<0.3"',
    )
    test = "def test_h():\n    from treadle.beta import h\n\n    assert h() == 2\n"
    repo.edit("tests/beta/test_beta.py", test)
    repo.commit("alpha 0.2.0, beta 0.1.0")
    return repo


def pytest_pin() -> str:
    return next(d for d in workspace_pins(REPO_ROOT, ("pytest",)))


def test_oldest_siblings_come_from_tags_or_the_working_tree(family):
    packages = read_packages(family.root)
    (old,) = oldest_siblings(family.root, packages["beta"], packages)
    assert (str(old.version), old.tag, old.is_current) == ("0.1.0", "treadle-alpha-v0.1.0", False)
    assert str(old) == "treadle-alpha==0.1.0 (tag treadle-alpha-v0.1.0)"
    family.replace("packages/beta/pyproject.toml", ">=0.1.0,<0.3", ">=0.2,<0.3")
    packages = read_packages(family.root)
    (old,) = oldest_siblings(family.root, packages["beta"], packages)
    assert str(old) == "treadle-alpha==0.2.0 (working tree)" and old.is_current
    family.replace("packages/beta/pyproject.toml", ">=0.2,<0.3", ">=0.3,<0.4")
    packages = read_packages(family.root)
    with pytest.raises(ReleaseError) as error:
        oldest_siblings(family.root, packages["beta"], packages)
    assert str(error.value) == (
        "treadle-beta: no version of treadle-alpha (0.1.0, 0.2.0) satisfies treadle-alpha<0.4,>=0.3"
    )


def test_a_range_claiming_more_than_the_code_supports_fails(family, tmp_path):
    # beta says it works with alpha 0.1.0, but it calls g(), new in 0.2.0.
    result = run_tool("minimum.py", "--repo", str(family.root), "beta")
    assert result.returncode == 1
    assert "treadle-beta with treadle-alpha==0.1.0 (tag treadle-alpha-v0.1.0): " in result.stdout
    assert "1 failed" in result.stdout
    assert "cannot import name 'g' from 'treadle.alpha'" in result.stderr
    assert "minimum versions: treadle-beta failed with their oldest allowed siblings" in (
        result.stderr
    )
    # Raising the lower bound to the version that brought g() fixes it (--all: even though the
    # oldest allowed alpha is now the current one).
    family.replace("packages/beta/pyproject.toml", ">=0.1.0,<0.3", ">=0.2.0,<0.3")
    result = run_tool("minimum.py", "--repo", str(family.root), "--all")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "treadle-alpha: skipped, it requires no sibling" in result.stdout
    assert "treadle-beta with treadle-alpha==0.2.0 (working tree): 1 passed" in result.stdout
