"""Fixtures shared by the tests of treadle-registry.

The default scope and the entry-point cache are process-wide: each test starts with no default
scope and entry points read afresh, and leaves them so.
"""

import types

import pytest
from registry_toys import CascadeHead, FasterRCNN, MobileNet, ResNet  # tests/support

from treadle.logging import Logger
from treadle.registry import DefaultScope, Registry, refresh_entry_points


def _forget_globals() -> None:
    DefaultScope._instance_dict.clear()
    for logger in list(Logger._instance_dict.values()):
        logger.close()
    Logger._instance_dict.clear()
    refresh_entry_points()


@pytest.fixture(autouse=True)
def fresh_globals():
    _forget_globals()
    yield
    _forget_globals()


@pytest.fixture
def tree():
    """root (treadle) -> mydet, mycls; mydet -> mydet3d, each with one class of its own."""
    root = Registry("models", scope="treadle")
    det = Registry("det models", parent=root, scope="mydet")
    cls = Registry("cls models", parent=root, scope="mycls")
    det3d = Registry("det3d models", parent=det, scope="mydet3d")
    root.register_module(module=ResNet)
    det.register_module(module=FasterRCNN)
    cls.register_module(module=MobileNet)
    det3d.register_module(module=CascadeHead)
    return types.SimpleNamespace(root=root, det=det, cls=cls, det3d=det3d)
