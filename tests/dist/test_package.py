"""treadle.dist installs as its own distribution, inside the treadle namespace."""

import importlib.metadata

import treadle.dist


def test_version_matches_the_distribution():
    assert treadle.dist.__version__ == importlib.metadata.version("treadle-dist")
