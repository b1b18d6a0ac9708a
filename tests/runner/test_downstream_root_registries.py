"""What a real toolbox registers in treadle's root registries must not clash with treadle.

mmcv (imported by mmpretrain, mmdetection...) registers its transforms straight into the root
TRANSFORMS registry of MMEngine, Compose among them; under treadle.compat that root registry is
treadle's, so treadle must leave free every name MMEngine leaves free.
"""

from __future__ import annotations

import pytest

import treadle.runner.dataset as dataset
from treadle.runner.registry import TRANSFORMS


@pytest.fixture
def restore_transforms():
    before = dict(TRANSFORMS.module_dict)
    yield
    TRANSFORMS.module_dict.clear()
    TRANSFORMS.module_dict.update(before)


def test_compose_is_not_registered_in_the_root_transforms():
    TRANSFORMS.import_from_location()
    assert "Compose" not in TRANSFORMS.module_dict
    # The class is still importable, and BaseDataset still builds its pipeline with it.
    assert dataset.Compose([abs])(-2) == 2


def test_a_toolbox_registers_its_own_compose_in_the_root(restore_transforms):
    TRANSFORMS.import_from_location()

    @TRANSFORMS.register_module()
    class Compose:  # what mmcv.transforms.wrappers does at import
        def __init__(self, transforms):
            self.transforms = transforms

    assert TRANSFORMS.build({"type": "Compose", "transforms": []}).transforms == []


def test_a_second_compose_still_clashes_with_a_clear_message(restore_transforms):
    TRANSFORMS.import_from_location()

    @TRANSFORMS.register_module(name="Compose")
    class First:
        pass

    with pytest.raises(KeyError, match="Compose is already registered in transform at "):

        @TRANSFORMS.register_module(name="Compose")
        class Second:
            pass
