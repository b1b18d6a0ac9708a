"""treadle.fileio installs as its own distribution, inside the treadle namespace."""

import importlib.metadata

import treadle.fileio


def test_version_matches_the_distribution():
    assert treadle.fileio.__version__ == importlib.metadata.version("treadle-fileio")
