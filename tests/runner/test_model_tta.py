"""BaseTTAModel: each augmented view predicted as a batch, predictions merged per sample."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from treadle.runner.model import BaseDataPreprocessor, BaseModel, BaseTTAModel
from treadle.runner.registry import MODELS


class Scale(BaseModel):
    def __init__(self, factor=2.0, data_preprocessor=None):
        super().__init__(data_preprocessor=data_preprocessor)
        self.factor = factor
        self.calls = 0

    def forward(self, inputs, data_samples=None, mode="tensor"):
        self.calls += 1
        return [self.factor * x for x in inputs]


class Average(BaseTTAModel):
    def merge_preds(self, data_samples_list):
        self.received = data_samples_list
        return [sum(views) / len(views) for views in data_samples_list]


def test_dict_batch_runs_each_view_and_merges_per_sample():
    model = Scale()
    tta = Average(model)
    data = {
        "inputs": [[torch.tensor(1.0), torch.tensor(2.0)], [torch.tensor(3.0), torch.tensor(4.0)]],
        "data_samples": [[None, None], [None, None]],
    }
    merged = tta.test_step(data)
    assert model.calls == 2
    assert [m.item() for m in merged] == [4.0, 6.0]  # (2*1 + 2*3) / 2, (2*2 + 2*4) / 2
    assert isinstance(tta.received[0], tuple) and len(tta.received) == 2


def test_tuple_batch_gives_one_list_per_view():
    class Recording(nn.Module):
        def __init__(self):
            super().__init__()
            self.views = []

        def test_step(self, data):
            self.views.append(data)
            return data[0]

    module = Recording()
    merged = Average(module).test_step(([[1.0, 2.0], [3.0, 4.0]], [["a", "b"], ["c", "d"]]))
    assert module.views == [[[1.0, 2.0], ["a", "b"]], [[3.0, 4.0], ["c", "d"]]]
    assert merged == [2.0, 3.0]


def test_module_from_config_gets_the_data_preprocessor_and_config_is_untouched():
    MODELS.register_module(module=Scale, force=True)
    cfg = dict(type="Scale", factor=3.0)
    tta = Average(cfg, data_preprocessor=dict(type="ImgDataPreprocessor"))
    assert type(tta.module.data_preprocessor).__name__ == "ImgDataPreprocessor"
    assert tta.module.factor == 3.0
    assert cfg == dict(type="Scale", factor=3.0)
    assert isinstance(tta.data_preprocessor, BaseDataPreprocessor)


def test_base_tta_model_is_registered_and_abstract():
    assert MODELS.get("BaseTTAModel") is BaseTTAModel
    with pytest.raises(TypeError, match=r"abstract method '?merge_preds"):
        BaseTTAModel(Scale())


def test_forward_is_not_the_way_to_predict():
    with pytest.raises(
        NotImplementedError,
        match=r"Average.forward will not be called in training or testing: Average predicts "
        r"through test_step",
    ):
        Average(Scale())(torch.ones(1))


@pytest.mark.parametrize(
    ("module", "error", "message"),
    [
        ("Scale", TypeError, "module must be an nn.Module or a config dict, got str"),
        (nn.Linear(1, 1), TypeError, "the wrapped Linear has no test_step method"),
    ],
)
def test_constructor_errors(module, error, message):
    with pytest.raises(error, match=message):
        Average(module)


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        ({}, ValueError, "empty dict"),
        ((), ValueError, "empty sequence"),
        (torch.ones(2), TypeError, "takes a dict, tuple or list .* got Tensor"),
        (
            {"inputs": [[1], [2]], "data_samples": [[None]]},
            ValueError,
            r"one entry per augmented view, got \{'inputs': 2, 'data_samples': 1\}",
        ),
        (([[1], [2]], [[3]]), ValueError, r"got view counts \[2, 1\]"),
        ({"inputs": torch.ones(2)}, TypeError, "'inputs' must be a list .* got Tensor"),
    ],
)
def test_test_step_errors_name_the_batch_shape(data, error, message):
    with pytest.raises(error, match=message):
        Average(Scale()).test_step(data)


def test_views_with_different_numbers_of_predictions_are_refused():
    class Uneven(nn.Module):
        def test_step(self, data):
            return data["inputs"]

    with pytest.raises(ValueError, match=r"different number of predictions .* \(\[2, 1\]\)"):
        Average(Uneven()).test_step({"inputs": [[1, 2], [3]]})
