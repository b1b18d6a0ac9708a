"""treadle.config installs as its own distribution, inside the treadle namespace."""

import importlib.metadata

import treadle.config


def test_version_matches_the_distribution():
    assert treadle.config.__version__ == importlib.metadata.version("treadle-config")
