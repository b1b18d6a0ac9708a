"""Fixtures shared by the tests of treadle-runner.

The default scope is process-wide: each test starts with none and leaves none behind. The current
logger is too: a Runner leaves its own (with a log file) current, so each test starts with a
fresh one of its own.
"""

import pytest
import torch
from http_files import Server

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


@pytest.fixture
def server(tmp_path):
    """A loopback http server of a fresh ``served`` folder (checkpoint downloads without the
    network)."""
    root = tmp_path / "served"
    root.mkdir()
    http_server = Server(root)
    yield http_server
    http_server.close()


@pytest.fixture
def torch_home(tmp_path, monkeypatch):
    """TORCH_HOME, where downloaded checkpoints are cached, in the test's own folder."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    return tmp_path / "torch_home"
