"""Fixtures shared by the tests of treadle-runner.

The default scope is process-wide: each test starts with none and leaves none behind. The current
logger is too: a Runner leaves its own (with a log file) current, so each test starts with a
fresh one of its own.
"""

import pytest
import torch

from treadle.logging import MMLogger
from treadle.registry import DefaultScope


@pytest.fixture(autouse=True)
def no_default_scope():
    DefaultScope._instance_dict.clear()
    yield
    DefaultScope._instance_dict.clear()


@pytest.fixture(autouse=True)
def fresh_current_logger(request):
    MMLogger.get_instance(f"test:{request.node.nodeid}")
    yield


def pytest_runtest_setup(item):
    # The `cuda` marker (pyproject.toml) means "needs a CUDA GPU": skipped on machines without one.
    if item.get_closest_marker("cuda") is not None and not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU (marked cuda)")
