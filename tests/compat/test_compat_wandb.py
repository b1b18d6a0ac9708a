"""Under treadle.compat a mocked ``wandb`` module sees MMEngine 0.10.7's calls: no step metric,
``define_metric_cfg`` through ``wandb.define_metric``, rows through ``wandb.log`` without a step."""

import sys
from unittest import mock

import numpy as np
import pytest


@pytest.fixture
def fake_wandb():
    fake = mock.MagicMock()
    with mock.patch.dict(sys.modules, {"wandb": fake}):
        yield fake


def test_define_metric_cfg_as_a_list_goes_to_the_module(compat, fake_wandb, tmp_path):
    from mmengine.visualization import WandbVisBackend

    cfg = [dict(name="test1", step_metric="iter"), dict(name="test2", step_metric="epoch")]
    backend = WandbVisBackend(str(tmp_path), define_metric_cfg=cfg)
    backend._init_env()
    assert backend._wandb is fake_wandb
    assert fake_wandb.define_metric.call_args_list == [
        mock.call(name="test1", step_metric="iter"),
        mock.call(name="test2", step_metric="epoch"),
    ]
    # No step axis declared on the run either: MMEngine declares none.
    fake_wandb.init.return_value.define_metric.assert_not_called()
    fake_wandb.init.assert_called_once_with(dir=str(tmp_path))


def test_define_metric_cfg_as_a_dict_goes_to_the_module(compat, fake_wandb, tmp_path):
    from mmengine.visualization import WandbVisBackend

    backend = WandbVisBackend(str(tmp_path), define_metric_cfg=dict(test3="max"))
    backend._init_env()
    fake_wandb.define_metric.assert_called_once_with("test3", summary="max")


def test_rows_go_to_wandb_log_without_a_step(compat, fake_wandb, tmp_path):
    from mmengine.visualization import WandbVisBackend

    backend = WandbVisBackend(str(tmp_path), commit=False)
    backend.add_scalar("map", 0.9, step=3)
    backend.add_scalars({"map": [0.8], "acc": 0.8}, step=4)  # MMEngine logs lists as they are
    image = np.zeros((4, 5, 3), dtype=np.uint8)
    backend.add_image("img", image, step=5)
    assert fake_wandb.log.call_args_list == [
        mock.call({"map": 0.9}, commit=False),
        mock.call({"map": [0.8], "acc": 0.8}, commit=False),
        mock.call({"img": fake_wandb.Image.return_value}, commit=False),
    ]
    fake_wandb.init.return_value.log.assert_not_called()


def test_config_graph_and_close_use_the_module(compat, fake_wandb, tmp_path):
    from mmengine.config import Config
    from mmengine.visualization import WandbVisBackend

    backend = WandbVisBackend(str(tmp_path), log_code_name="code", watch_kwargs={"log_freq": 2})
    backend.add_config(Config(dict(a=1)))
    fake_wandb.config.update.assert_called_once_with({"a": 1}, allow_val_change=False)
    fake_wandb.run.log_code.assert_called_once_with(name="code")
    model = object()
    backend.add_graph(model, None)
    fake_wandb.watch.assert_called_once_with(model, log_freq=2)
    backend.close()
    fake_wandb.join.assert_called_once_with()


def test_treadle_step_axis_comes_back_after_uninstall(no_mmengine_modules, fake_wandb, tmp_path):
    import treadle.compat
    from treadle.visual.backends.wandb_backend import WandbVisBackend

    treadle.compat.install()
    assert WandbVisBackend.step_metric is False
    treadle.compat.uninstall()
    assert WandbVisBackend.step_metric is True
    backend = WandbVisBackend(str(tmp_path))
    backend.add_scalar("loss", 0.5, step=7)
    run = fake_wandb.init.return_value
    run.define_metric.assert_any_call("*", step_metric="step")
    run.log.assert_called_once_with({"loss": 0.5, "step": 7}, commit=True)
    fake_wandb.log.assert_not_called()
