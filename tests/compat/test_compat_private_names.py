"""Private and deprecated MMEngine names that toolboxes import, at MMEngine's paths."""

import importlib
import json

import numpy as np
import pytest
import torch

PRIVATE = [
    ("mmengine.evaluator.metric", "_to_cpu"),
    ("mmengine.runner.checkpoint", "_load_checkpoint"),
    ("mmengine.runner.checkpoint", "_load_checkpoint_to_model"),
    ("mmengine.analysis.print_helper", "_format_size"),
    ("mmengine.optim.scheduler.param_scheduler", "_ParamScheduler"),
    ("mmengine.utils.dl_utils.parrots_wrapper", "_BatchNorm"),
    ("mmengine.utils.dl_utils.parrots_wrapper", "_InstanceNorm"),
    ("mmengine.runner.loops", "_InfiniteDataloaderIterator"),
    ("mmengine.logging.logger", "_get_device_id"),
    ("mmengine.fileio.handlers.json_handler", "set_default"),
    ("mmengine.model.efficient_conv_bn_eval", "turn_on_efficient_conv_bn_eval"),
    ("mmengine.fileio.file_client", "FileClient"),
    ("mmengine", "FileClient"),
]


@pytest.mark.parametrize(("module", "name"), PRIVATE)
def test_importable_at_mmengine_path(compat, module, name):
    assert getattr(importlib.import_module(module), name) is not None


def test_to_cpu_moves_nested_tensors(compat):
    from mmengine.evaluator.metric import _to_cpu

    moved = _to_cpu({"a": [torch.ones(2)], "b": (torch.zeros(1), "x")})
    assert moved["a"][0].device.type == "cpu" and moved["b"][1] == "x"


def test_format_size_and_batchnorm_kinds(compat):
    from mmengine.analysis.print_helper import _format_size
    from mmengine.utils.dl_utils.parrots_wrapper import _BatchNorm, _InstanceNorm

    assert _format_size(123456) == "0.123M"
    assert isinstance(torch.nn.BatchNorm2d(2), _BatchNorm)
    assert isinstance(torch.nn.InstanceNorm2d(2), _InstanceNorm)


def test_infinite_dataloader_iterator_restarts_with_the_next_epoch(compat):
    from mmengine.dataset import DefaultSampler
    from mmengine.runner.loops import _InfiniteDataloaderIterator
    from torch.utils.data import DataLoader

    loader = DataLoader(list(range(3)), sampler=DefaultSampler(list(range(3)), seed=0))
    batches = _InfiniteDataloaderIterator(loader)
    assert len([next(batches) for _ in range(7)]) == 7
    assert loader.sampler.epoch == 2


def test_get_device_id_on_cpu_is_the_local_rank(compat, monkeypatch):
    from mmengine.logging.logger import _get_device_id

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert _get_device_id() == 3


def test_set_default_converts_and_names_what_it_cannot(compat):
    from mmengine.fileio.handlers.json_handler import set_default

    assert json.dumps({"a": {1}, "b": np.float32(0.5), "c": range(2)}, default=set_default) == (
        '{"a": [1], "b": 0.5, "c": [0, 1]}'
    )
    with pytest.raises(TypeError, match="is unsupported for json dump"):
        set_default(object())


def test_file_client_under_compat_warns_and_works(compat, tmp_path):
    from mmengine.fileio import FileClient

    with pytest.warns(DeprecationWarning, match="FileClient is deprecated"):
        client = FileClient.infer_client(uri=str(tmp_path))
    client.put_text("x", tmp_path / "a.txt")
    assert client.get_text(tmp_path / "a.txt") == "x"


def test_private_name_treadle_lacks_says_so(compat):
    import mmengine.runner.checkpoint as checkpoint

    with pytest.raises(AttributeError, match=r"MMEngine 0\.10\.7's module has it"):
        checkpoint._get_mmengine_home  # noqa: B018
