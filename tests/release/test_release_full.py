"""`release:check`'s full part on the real checkout: every wheel and sdist builds, the sdist
rebuilds the same wheel, and each package installs alone in a fresh venv and imports.

It takes about 5 minutes on CI's 2 cores (three fresh installs of torch), more than the release
checks may add to CI, and tests/repo/test_single_package_install.py already installs every
wheel alone there (and runs its tests): so CI skips it, and `hatch run release:check` (or
TREADLE_RELEASE_FULL=1 with pytest) runs it.
"""

from __future__ import annotations

import os

import pytest
from release_scratch import run_tool


@pytest.mark.skipif(
    os.environ.get("TREADLE_RELEASE_FULL") != "1",
    reason="about 5 min: run by `hatch run release:check`, or set TREADLE_RELEASE_FULL=1",
)
def test_every_package_builds_installs_alone_and_imports():
    result = run_tool("check.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "built, installed alone, imported" in result.stdout
