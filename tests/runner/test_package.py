"""treadle.runner installs as its own distribution, inside the treadle namespace."""

import importlib.metadata

import treadle.runner


def test_version_matches_the_distribution():
    assert treadle.runner.__version__ == importlib.metadata.version("treadle-runner")
