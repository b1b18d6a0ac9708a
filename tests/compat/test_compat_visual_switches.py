"""Under treadle.compat the visualization does what MMEngine 0.10.7's does: scalars.json gets each
call's line before the call returns, and the inputs MMEngine refuses (nested lists as
coordinates, flipped boxes, numpy feature maps) are refused with MMEngine's exception types."""

import json

import numpy as np
import pytest

from treadle.visual.backends import LocalVisBackend
from treadle.visual.mmengine_checks import MMEngineChecks


def test_install_turns_the_switches_on_and_uninstall_off(compat):
    assert MMEngineChecks.enabled is True and LocalVisBackend.write_through is True
    compat.uninstall()
    assert MMEngineChecks.enabled is False and LocalVisBackend.write_through is False
    compat.install()  # the fixture uninstalls once more


def test_scalars_json_holds_each_line_at_once(compat, tmp_path):
    from mmengine.fileio import load
    from mmengine.visualization import LocalVisBackend as MMLocal

    backend = MMLocal(str(tmp_path))
    backend.add_scalar("map", 0.9)
    assert load(backend._scalar_save_file, "json") == {"map": 0.9, "step": 0}
    backend.add_scalars({"map": 0.8}, step=1, global_step=40)  # no "iter" key under compat
    assert json.loads((tmp_path / "scalars.json").read_text().splitlines()[1]) == {
        "map": 0.8,
        "step": 1,
    }
    backend.close()


def test_visualizer_refuses_what_mmengine_refuses(compat):
    import torch
    from mmengine.visualization import Visualizer

    vis = Visualizer(image=np.zeros((10, 10, 3), np.uint8))
    with pytest.raises(TypeError, match=r"`bboxes` should be"):
        vis.draw_bboxes([1, 1, 2, 2])
    with pytest.raises(AssertionError, match=r"x1 <= x2 and y1 <= y2"):
        vis.draw_bboxes(torch.tensor([5, 1, 2, 2]))
    with pytest.raises(AssertionError, match=r"`featmap` should be torch.Tensor"):
        Visualizer.draw_featmap(np.ones((3, 3, 3)))
