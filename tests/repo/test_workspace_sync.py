"""tools/workspace_sync.py: the test scripts' first step, which reinstalls a workspace package
whose installed metadata (version, requirements) no longer matches its files."""

from __future__ import annotations

import email.message
import importlib.util
import pathlib
import subprocess
import sys
import textwrap

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sync():
    spec = importlib.util.spec_from_file_location(
        "workspace_sync", REPO_ROOT / "tools" / "workspace_sync.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_package(root: pathlib.Path, version: str, dependencies: str, extras: str = "") -> None:
    folder = root / "packages" / "demo"
    (folder / "src" / "demo").mkdir(parents=True)
    (folder / "src" / "demo" / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [project]
            name = "Demo_Package"
            dynamic = ["version"]
            dependencies = {dependencies}
            {extras}
            [tool.hatch.version]
            path = "src/demo/__init__.py"
            """)
    )


def metadata(version: str, *requires: str) -> email.message.Message:
    """What importlib.metadata returns for an installed distribution, as far as the tool reads."""
    message = email.message.Message()
    message["Version"] = version
    for line in requires:
        message["Requires-Dist"] = line
    return message


def test_this_environment_is_in_sync(sync):
    # The test script ran the tool before pytest: every installed workspace package is current.
    assert list(sync.stale_members(REPO_ROOT, sync.installed_metadata)) == []


def test_a_version_bump_makes_the_package_stale(sync, tmp_path):
    write_package(tmp_path, "0.2.0", '["pyyaml>=5.4"]')
    stale = list(sync.stale_members(tmp_path, lambda name: metadata("0.1.0", "pyyaml>=5.4")))
    assert stale == [(tmp_path / "packages" / "demo", "installed 0.1.0, files say 0.2.0")]


def test_a_changed_requirement_makes_the_package_stale(sync, tmp_path):
    write_package(tmp_path, "0.1.0", '["pyyaml>=6", "numpy>=1.23"]')
    ((folder, why),) = sync.stale_members(
        tmp_path, lambda name: metadata("0.1.0", "pyyaml>=5.4", "numpy>=1.23")
    )
    assert folder.name == "demo"
    assert why == "requirements changed: pyyaml>=5.4, pyyaml>=6"


def test_spellings_that_builds_normalise_are_not_changes(sync, tmp_path):
    # Names as written vs canonical, specifier order, marker quotes, extras as markers.
    extras = '[project.optional-dependencies]\nfast = ["Sophia_Optimizer>=0.1,!=0.2.5"]\n'
    write_package(tmp_path, "0.1.0", '["PyYAML<7,>=5.4"]', extras)
    recorded = metadata("0.1.0", "pyyaml>=5.4,<7", "sophia-optimizer!=0.2.5,>=0.1; extra == 'fast'")
    assert list(sync.stale_members(tmp_path, lambda name: recorded)) == []


def test_packages_not_installed_here_are_left_alone(sync, tmp_path):
    write_package(tmp_path, "0.2.0", "[]")
    assert list(sync.stale_members(tmp_path, lambda name: None)) == []


def test_check_mode_reports_without_installing():
    # In this (synced) environment: nothing to say, exit 0.
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "workspace_sync.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == (0, "")


def test_the_test_scripts_sync_first(repo_root):
    import tomllib

    config = tomllib.loads((repo_root / "hatch.toml").read_text())
    for env in ("default", "downstream", "light"):
        assert config["envs"][env]["scripts"]["test"][0] == "python tools/workspace_sync.py"
