"""mock.patch at MMEngine's module paths changes what treadle's code behind them uses, and
puts treadle's own values back afterwards; MMEngine's module-level names (imports) exist."""

import os
import sys
import time
from unittest import mock

import numpy as np
import pytest


def test_imported_names_exist_at_mmengine_paths(compat):
    import mmengine.dataset.sampler as sampler
    import mmengine.hooks.iter_timer_hook as iter_timer_hook
    import torch

    from treadle.dist import get_dist_info, sync_random_seed

    assert sampler.get_dist_info is get_dist_info
    assert sampler.sync_random_seed is sync_random_seed
    assert sampler.torch is torch
    assert iter_timer_hook.time is time


def test_name_mmengine_never_had_is_an_attribute_error(compat):
    import mmengine.dataset.sampler as sampler

    with pytest.raises(AttributeError, match=r"neither has MMEngine 0\.10\.7's"):
        sampler.check_sampler_state  # noqa: B018  (treadle's own helper, not MMEngine's)


@pytest.mark.parametrize("sampler_type", ["DefaultSampler", "InfiniteSampler"])
def test_patched_get_dist_info_gives_the_rank_its_share(compat, sampler_type):
    import mmengine.dataset.sampler as sampler_module

    with mock.patch("mmengine.dataset.sampler.get_dist_info", return_value=(1, 2)):
        sampler = getattr(sampler_module, sampler_type)(range(10), shuffle=False)
        assert (sampler.rank, sampler.world_size) == (1, 2)
        assert [index for index, _ in zip(sampler, range(5), strict=False)] == [1, 3, 5, 7, 9]
    # Restored: treadle's own get_dist_info again.
    assert getattr(sampler_module, sampler_type)(range(4)).world_size == 1


def test_patched_sync_random_seed_seeds_the_sampler(compat):
    from mmengine.dataset import DefaultSampler

    with mock.patch("mmengine.dataset.sampler.sync_random_seed", return_value=1234):
        assert DefaultSampler(range(10)).seed == 1234
    import treadle.runner.dataset.default_sampler as treadle_module
    from treadle.dist import sync_random_seed

    assert treadle_module.sync_random_seed is sync_random_seed


def test_looked_up_before_patching_is_restored_too(compat):
    import mmengine.dataset.sampler as sampler_module

    original = sampler_module.get_dist_info  # now in the path's own namespace: a local patch
    with mock.patch.object(sampler_module, "get_dist_info", return_value=(0, 4)):
        assert sampler_module.DefaultSampler(range(8), shuffle=False).world_size == 4
    assert sampler_module.get_dist_info is original
    assert sampler_module.DefaultSampler(range(8)).world_size == 1


def test_monkeypatch_at_an_mmengine_path(compat, monkeypatch):
    import mmengine.dataset.sampler as sampler_module

    monkeypatch.setattr(sampler_module, "get_dist_info", lambda: (2, 3))
    assert sampler_module.DefaultSampler(range(9), shuffle=False).rank == 2
    monkeypatch.undo()
    assert sampler_module.DefaultSampler(range(9)).rank == 0


def test_patched_time_changes_iter_timer_hook_times(compat):
    from mmengine.hooks import IterTimerHook

    runner = mock.MagicMock()
    with mock.patch("mmengine.hooks.iter_timer_hook.time") as fake_time:
        fake_time.time.side_effect = [10.0, 13.5]
        hook = IterTimerHook()
        hook.after_val_iter(runner, 0)
    runner.message_hub.update_scalar.assert_any_call("val/time", 3.5)
    import treadle.runner.hooks.iter_timer_hook as treadle_module

    assert treadle_module.time is time


def test_patched_cv2_is_what_visualizer_show_uses(compat):
    from mmengine.visualization import Visualizer

    visualizer = Visualizer(image=np.zeros((4, 4, 3), dtype=np.uint8))
    with mock.patch("mmengine.visualization.visualizer.cv2") as fake_cv2:
        visualizer.show(backend="cv2", wait_time=1)
    fake_cv2.imshow.assert_called_once()
    fake_cv2.waitKey.assert_called_once_with(1000)
    import treadle.visual.visualizer as treadle_module

    assert treadle_module.cv2 is None


def test_tracker_mocked_in_sys_modules_is_used(compat, tmp_path):
    from mmengine.visualization import WandbVisBackend

    with mock.patch.dict(sys.modules, {"wandb": mock.MagicMock()}):
        backend = WandbVisBackend(str(tmp_path))
        backend.add_scalar("map", 0.9)
        assert backend.experiment is sys.modules["wandb"]


def test_missing_tracker_still_names_the_extra(compat, tmp_path):
    from mmengine.visualization import WandbVisBackend

    with mock.patch.dict(sys.modules, {"wandb": None}):
        backend = WandbVisBackend(str(tmp_path))
        with pytest.raises(ImportError, match=r"pip install treadle-visual\[wandb\]"):
            backend.add_scalar("map", 0.9)


def test_mmengine_file_and_path(compat):
    import importlib.resources
    import pkgutil

    import mmengine
    import mmengine.dataset.sampler

    import treadle.compat

    folder = os.path.dirname(mmengine.__file__)
    assert folder == os.path.dirname(treadle.compat.__file__)
    assert os.path.isfile(mmengine.dataset.sampler.__file__)
    assert mmengine.__path__ == [] and not hasattr(mmengine.dataset.sampler, "__path__")
    assert list(pkgutil.iter_modules(mmengine.__path__)) == []
    assert importlib.resources.files("mmengine") is not None
