"""The documentation site: `hatch run docs:build` (mkdocs, strict) in its own environment, and
every name each package exports in the API reference (mkdocstrings' objects inventory).

The build runs through hatch, as a developer runs it: the site's tools are pinned in the docs
environment of hatch.toml, not installed here.
"""

from __future__ import annotations

import importlib
import pathlib
import shutil
import subprocess
import zlib

import pytest


@pytest.fixture(scope="module")
def site(repo_root, tmp_path_factory) -> pathlib.Path:
    hatch = shutil.which("hatch")
    assert hatch, "hatch is not on PATH: the README's test command installs it"
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [hatch, "run", "docs:build", "--site-dir", str(out)],
        cwd=repo_root,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def inventory_names(path: pathlib.Path) -> set[str]:
    """The object names of a Sphinx-format objects.inv: four text lines, then zlib data."""
    data = path.read_bytes()
    start = 0
    for _ in range(4):
        start = data.index(b"\n", start) + 1
    lines = zlib.decompress(data[start:]).decode().splitlines()
    return {line.split(" ", 1)[0] for line in lines}


def test_every_exported_name_is_in_the_api_reference(site, package_names):
    names = inventory_names(site / "objects.inv")
    for package in package_names:
        module = importlib.import_module(f"treadle.{package}")
        missing = [name for name in module.__all__ if f"treadle.{package}.{name}" not in names]
        assert missing == [], f"treadle.{package}: {missing} not in the API reference"


def test_package_pages_include_the_readmes(site, repo_root, package_names):
    for package in package_names:
        page = (repo_root / "docs" / "packages" / f"{package}.md").read_text()
        assert f"packages/{package}/README.md" in page and "include-markdown" in page
        built = (site / "packages" / package / "index.html").read_text()
        assert f'<h1 id="treadle-{package}">treadle-{package}' in built
