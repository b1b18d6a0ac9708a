"""Fixtures shared by the tests of treadle-runner.

The default scope is process-wide: each test starts with none and leaves none behind.
"""

import pytest

from treadle.registry import DefaultScope


@pytest.fixture(autouse=True)
def no_default_scope():
    DefaultScope._instance_dict.clear()
    yield
    DefaultScope._instance_dict.clear()
