"""treadle.registry installs as its own distribution, inside the treadle namespace."""

import importlib.metadata

import treadle.registry


def test_version_matches_the_distribution():
    assert treadle.registry.__version__ == importlib.metadata.version("treadle-registry")
