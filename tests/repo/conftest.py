"""Fixtures shared by the repository-wide checks (layering, packaging, CI)."""

from __future__ import annotations

import pathlib

import pytest
import tomllib

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("logging", "config", "registry", "fileio", "dist", "visual", "runner", "compat")


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def root_pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


@pytest.fixture(scope="session")
def package_names() -> tuple[str, ...]:
    return PACKAGES
