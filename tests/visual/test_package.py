"""treadle.visual installs as its own distribution, inside the treadle namespace."""

import importlib.metadata

import treadle.visual


def test_version_matches_the_distribution():
    assert treadle.visual.__version__ == importlib.metadata.version("treadle-visual")
