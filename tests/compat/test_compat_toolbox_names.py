"""Names of MMEngine 0.10.7 that mmdetection 3.3.0, mmsegmentation 1.2.2, mmcv 2.1.0 and code
built on them import, beyond the public ones: type aliases (mmdetection's and mmsegmentation's
inferencers import ``ModelType``), module constants, and the validation-loss helpers of
``mmengine.runner.loops``."""

import math

import pytest
import torch


def test_inferencer_type_aliases_import(compat):
    from mmengine.config import Config, ConfigDict
    from mmengine.infer.infer import (
        BaseInferencer,
        ConfigType,
        ImgType,
        InstanceList,
        ModelType,
        ResType,
    )
    from mmengine.structures import InstanceData

    assert BaseInferencer.__module__.startswith("treadle.")
    assert set(ModelType.__args__) == {dict, Config, ConfigDict, str}
    assert set(ConfigType.__args__) == {Config, ConfigDict}
    assert InstanceList.__args__ == (InstanceData,)
    assert ImgType is not None and ResType is not None


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("mmengine.runner.runner", ["ConfigType", "ParamSchedulerType", "OptimWrapperType"]),
        ("mmengine.runner._flexible_runner", ["ConfigType", "OptimWrapperType"]),
        ("mmengine._strategy.base", ["ParamSchedulerType"]),
        ("mmengine.optim.scheduler.param_scheduler", ["OptimizerType"]),
        ("mmengine.structures.instance_data", ["BoolTypeTensor", "LongTypeTensor", "IndexType"]),
        ("mmengine.model.base_model.data_preprocessor", ["CastData"]),
        (
            "mmengine.model.test_time_aug",
            ["EnhancedBatchInputs", "EnhancedBatchDataSamples", "MergedDataSamples"],
        ),
        ("mmengine.visualization.visualizer", ["VisBackendsType"]),
    ],
)
def test_type_aliases_of_other_modules_import(compat, module, names):
    import importlib

    found = importlib.import_module(module)
    for name in names:
        assert getattr(found, name) is not None, name


def test_runner_config_type_is_dict_or_config(compat):
    from mmengine.config import Config, ConfigDict
    from mmengine.runner.runner import ConfigType

    assert set(ConfigType.__args__) == {dict, Config, ConfigDict}


def test_module_constants(compat):
    import mmengine.hooks.checkpoint_hook as checkpoint_hook
    import mmengine.hooks.early_stopping_hook as early_stopping_hook
    import mmengine.model as model

    assert checkpoint_hook.inf == math.inf == early_stopping_hook.inf
    version = model.TORCH_VERSION
    assert version == torch.__version__


def test_update_losses_moves_the_loss_element_into_buffers(compat):
    from mmengine.logging import HistoryBuffer
    from mmengine.runner.loops import _update_losses
    from mmengine.structures import BaseDataElement

    loss = BaseDataElement(loss={"loss_cls": torch.tensor(2.0), "acc": [torch.tensor(1.0)]})
    outputs, losses = _update_losses(["pred", loss], {"loss_cls": HistoryBuffer([4.0], [1])})
    assert outputs == ["pred"]
    assert losses["loss_cls"].data == ([4.0, 2.0], [1, 1])
    assert losses["acc"].data == ([1.0], [1])
    # Outputs without a trailing loss element stay as they are.
    assert _update_losses(["pred"], {}) == (["pred"], {})


def test_parse_losses_means_and_the_stage_total(compat):
    from mmengine.logging import HistoryBuffer
    from mmengine.runner.loops import _parse_losses

    losses = {
        "loss_cls": HistoryBuffer([1.0, 3.0], [1, 1]),
        "loss_box": HistoryBuffer([0.5], [1]),
        "acc": HistoryBuffer([0.25], [1]),
    }
    assert _parse_losses(losses, "val") == {
        "loss_cls": 2.0,
        "loss_box": 0.5,
        "acc": 0.25,
        "val_loss": 2.5,
    }
    assert _parse_losses({}, "test") == {"test_loss": 0}
