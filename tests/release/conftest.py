"""Fixtures of the release tests: scratch repositories (see tests/support/release_scratch.py)."""

from __future__ import annotations

import subprocess

import pytest
from release_scratch import REPO_ROOT, ScratchRepo


@pytest.fixture(scope="session")
def scratch_template(tmp_path_factory) -> ScratchRepo:
    """One copy of the workspace, committed; each test clones it (faster than copying)."""
    return ScratchRepo.copy_of(REPO_ROOT, tmp_path_factory.mktemp("template"))


@pytest.fixture
def scratch(scratch_template, tmp_path) -> ScratchRepo:
    root = tmp_path / "repo"
    subprocess.run(
        ["git", "clone", "--quiet", str(scratch_template.root), str(root)],
        check=True,
        capture_output=True,
    )
    return ScratchRepo(root)
