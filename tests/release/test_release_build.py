"""`release:build PACKAGE...` and the build half of `release:check`'s full part: wheels and
sdists with the right names and metadata, an sdist that rebuilds the same wheel, refusals
that name what to fix."""

from __future__ import annotations

import importlib.util
import tarfile

import pytest
from release_scratch import REPO_ROOT, run_tool
from release_wheels import build_distributions, check_sdist_rebuilds, wheel_metadata
from release_workspace import read_packages


def test_build_puts_wheel_and_sdist_of_each_named_package_in_out(tmp_path):
    out = tmp_path / "dist"
    result = run_tool("build.py", "--out", str(out), "--no-twine", "logging", "treadle-config")
    assert result.returncode == 0, result.stderr
    packages = read_packages(REPO_ROOT)
    names = sorted(p.name for p in out.iterdir())
    expected = []
    for folder in ("config", "logging"):
        stem = f"treadle_{folder}-{packages[folder].version}"
        expected += [f"{stem}-py3-none-any.whl", f"{stem}.tar.gz"]
    assert names == sorted(expected)
    assert sorted(result.stdout.split()) == sorted(str(out / n) for n in names)
    metadata = wheel_metadata(out / expected[0])
    assert metadata["Name"] == "treadle-config"
    assert metadata["Version"] == str(packages["config"].version)
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata["License-Expression"] == "Apache-2.0"
    with tarfile.open(out / expected[1]) as sdist:
        members = sdist.getnames()
    assert f"treadle_config-{packages['config'].version}/CHANGELOG.md" in members


@pytest.mark.skipif(importlib.util.find_spec("twine") is None, reason="twine: release env only")
def test_twine_accepts_the_build(tmp_path):
    result = run_tool("build.py", "--out", str(tmp_path), "registry")
    assert result.returncode == 0, result.stderr


def test_build_names_an_unknown_package_and_the_closest_one(tmp_path):
    result = run_tool("build.py", "--out", str(tmp_path), "--no-twine", "loging")
    assert result.returncode == 1
    assert "release build: no package 'loging' in packages/ (known: " in result.stderr
    assert "did you mean logging?" in result.stderr
    assert not tmp_path.exists() or not list(tmp_path.iterdir())


def test_build_refuses_a_package_the_check_fails(scratch, tmp_path):
    scratch.tag_all()
    scratch.edit("packages/config/src/treadle/config/__init__.py", "\nX = 1\n", append=True)
    out = tmp_path / "out"
    args = ("--repo", str(scratch.root), "--out", str(out), "--no-twine")
    result = run_tool("build.py", *args, "config")
    assert result.returncode == 1
    assert "release build: the release check fails for the packages to build:" in result.stderr
    assert "treadle-config: 1 released file(s) changed since tag" in result.stderr
    assert not out.exists()
    # Another package, whose check holds, still builds.
    assert run_tool("build.py", *args, "logging").returncode == 0


def test_build_notes_an_unreleased_changelog_heading(tmp_path):
    result = run_tool("build.py", "--out", str(tmp_path), "--no-twine", "logging")
    assert result.returncode == 0
    heading = next(
        line
        for line in (REPO_ROOT / "packages/logging/CHANGELOG.md").read_text().splitlines()
        if line.startswith("## ")
    )
    if "unreleased" in heading:
        assert f"still says '{heading}'; put the release date there" in result.stderr


def test_sdist_rebuilds_the_wheel(scratch, tmp_path):
    packages = read_packages(scratch.root)
    out = tmp_path / "out"
    build_distributions(packages["config"].path, out)
    assert check_sdist_rebuilds(packages["config"], out, tmp_path) == []
    # An sdist that leaves a module out installs a broken package: caught.
    scratch.replace(
        "packages/config/pyproject.toml",
        'include = ["src/treadle", "README.md", "CHANGELOG.md"]',
        'include = ["src/treadle/config/__init__.py", "README.md", "CHANGELOG.md"]',
    )
    packages = read_packages(scratch.root)
    out = tmp_path / "out-broken"
    build_distributions(packages["config"].path, out)
    (problem,) = check_sdist_rebuilds(packages["config"], out, tmp_path / "broken")
    assert problem.startswith(
        f"treadle-config: the wheel built from treadle_config-{packages['config'].version}.tar.gz "
        "differs from the one built from the tree (missing ['treadle/config/"
    )
    assert "fix [tool.hatch.build.targets.sdist] include in packages/config/pyproject.toml" in (
        problem
    )
