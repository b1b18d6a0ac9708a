"""The import-only torchvision stand-in: everything mmpretrain imports exists, nothing works."""

from __future__ import annotations

import importlib
import sys

import pytest
from downstream_runs import STANDIN


@pytest.fixture
def standin(monkeypatch):
    """The stand-in importable as ``torchvision`` for one test, removed afterwards."""
    saved = {
        name: module for name, module in sys.modules.items() if name.split(".")[0] == "torchvision"
    }
    for name in saved:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(STANDIN))
    yield importlib.import_module("torchvision")
    for name in [name for name in sys.modules if name.split(".")[0] == "torchvision"]:
        del sys.modules[name]
    sys.modules.update(saved)


def test_what_mmpretrain_imports_at_module_level_imports(standin):
    import torchvision.ops.boxes
    import torchvision.transforms.functional
    from torchvision.transforms import RandomResizedCrop
    from torchvision.transforms.transforms import InterpolationMode

    assert standin.__version__ == "0.0.0+standin"
    assert isinstance(RandomResizedCrop, type)  # mmpretrain subclasses it
    assert InterpolationMode is not None
    assert torchvision.ops.boxes.__name__ == "torchvision.ops.boxes"
    assert torchvision.transforms.functional.__name__ == "torchvision.transforms.functional"


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("torchvision", "models"),
        ("torchvision.ops", "nms"),
        ("torchvision.ops.boxes", "box_iou"),
        ("torchvision.transforms", "Resize"),
        ("torchvision.transforms.functional", "to_tensor"),
    ],
)
def test_any_other_name_raises_naming_the_stand_in(standin, module, name):
    with pytest.raises(AttributeError, match=rf"{module}\.{name} is not available: .*stand-in"):
        getattr(importlib.import_module(module), name)
    # hasattr keeps working for code that probes for optional features.
    assert not hasattr(importlib.import_module(module), name)


def test_using_the_imported_names_raises(standin):
    from torchvision.transforms import RandomResizedCrop
    from torchvision.transforms.transforms import InterpolationMode

    with pytest.raises(AttributeError, match=r"RandomResizedCrop is not available"):
        RandomResizedCrop(224)
    with pytest.raises(AttributeError, match=r"InterpolationMode\.BILINEAR is not available"):
        InterpolationMode.BILINEAR  # noqa: B018
    with pytest.raises(AttributeError, match=r"InterpolationMode\.__call__ is not available"):
        InterpolationMode("bilinear")


def test_dunder_lookups_behave_as_on_any_module(standin):
    import torchvision.ops

    with pytest.raises(AttributeError, match="has no attribute '__wrapped__'") as caught:
        torchvision.ops.__wrapped__  # noqa: B018
    assert "stand-in" not in str(caught.value)
