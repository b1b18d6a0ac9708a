"""BaseModel: construction, parse_losses (no device sync), train/val/test steps through an
optimizer wrapper, forward's data unpacking, and device moves reaching the preprocessor."""

from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn as nn

from treadle.runner.model import BaseDataPreprocessor, BaseModel, ImgDataPreprocessor
from treadle.runner.registry import MODELS


class Regressor(BaseModel):
    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor=data_preprocessor)
        self.linear = nn.Linear(2, 1)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        outputs = self.linear(inputs)
        if mode == "loss":
            return {
                "loss_mse": ((outputs - data_samples) ** 2).mean(),
                "loss_parts": [outputs.abs(), 2 * outputs.abs()],
                "mae": (outputs - data_samples).abs().mean().detach(),
            }
        if mode == "predict":
            return list(outputs)
        return outputs


class StubOptimWrapper:
    """What train_step needs of an OptimWrapper: a context and update_params (SGD, lr 0.1)."""

    def __init__(self, model):
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.calls = []

    @contextlib.contextmanager
    def optim_context(self, model):
        self.calls.append(("enter", type(model).__name__))
        yield
        self.calls.append(("exit",))

    def update_params(self, loss):
        self.calls.append(("update", loss))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def batch():
    return {"inputs": torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "data_samples": torch.ones(2, 1)}


def test_default_preprocessor_is_a_base_data_preprocessor():
    assert type(Regressor().data_preprocessor) is BaseDataPreprocessor


def test_preprocessor_from_config_and_from_module():
    built = Regressor(data_preprocessor=dict(type="ImgDataPreprocessor", mean=[0], std=[1]))
    assert isinstance(built.data_preprocessor, ImgDataPreprocessor)
    given = BaseDataPreprocessor()
    assert Regressor(data_preprocessor=given).data_preprocessor is given


def test_preprocessor_of_wrong_type_names_it():
    with pytest.raises(TypeError, match=r"data_preprocessor should be a config dict.*got str"):
        Regressor(data_preprocessor="ImgDataPreprocessor")


def test_unknown_preprocessor_type_names_closest():
    with pytest.raises(KeyError, match="ImgDataPreprocessor"):
        Regressor(data_preprocessor=dict(type="ImgDataPreprocesor"))


def test_base_model_is_abstract():
    with pytest.raises(TypeError, match=r"abstract method '?forward"):
        BaseModel()


def test_parse_losses_sums_loss_keys_and_logs_detached_means():
    model = Regressor()
    outputs = torch.tensor([[1.0], [-3.0]], requires_grad=True)
    losses = {
        "loss_a": outputs,
        "loss_b": [outputs, outputs * 2],
        "acc": torch.tensor([0.5, 1.0]),
    }
    loss, log_vars = model.parse_losses(losses)
    assert loss.requires_grad
    assert loss.item() == pytest.approx(-1.0 + -1.0 + -2.0)
    assert list(log_vars) == ["loss", "loss_a", "loss_b", "acc"]
    assert {k: v.item() for k, v in log_vars.items()} == {
        "loss": -4.0,
        "loss_a": -1.0,
        "loss_b": -3.0,
        "acc": 0.75,
    }
    assert all(isinstance(v, torch.Tensor) and not v.requires_grad for v in log_vars.values())


def test_parse_losses_logs_the_total_under_loss_even_with_a_key_named_loss():
    model = Regressor()
    loss, log_vars = model.parse_losses({"loss": torch.tensor(1.0), "loss_x": torch.tensor(2.0)})
    assert loss.item() == 3.0
    assert log_vars["loss"].item() == 3.0


def test_parse_losses_calls_no_item_and_no_cpu(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("parse_losses forced a device sync")

    model = Regressor()
    losses = {
        "loss_a": torch.ones(3),
        "loss_b": [torch.ones(2), torch.ones(1)],
        "acc": torch.ones(1),
    }
    monkeypatch.setattr(torch.Tensor, "item", refuse)
    monkeypatch.setattr(torch.Tensor, "cpu", refuse)
    monkeypatch.setattr(torch.Tensor, "tolist", refuse)
    monkeypatch.setattr(torch.Tensor, "__float__", refuse)
    loss, log_vars = model.parse_losses(losses)
    monkeypatch.undo()
    assert loss.item() == 3.0
    assert log_vars["acc"].item() == 1.0


def test_train_step_calls_no_item(monkeypatch):
    model = Regressor()
    wrapper = StubOptimWrapper(model)
    calls = []
    original = torch.Tensor.item

    def counting(self):
        calls.append(self)
        return original(self)

    monkeypatch.setattr(torch.Tensor, "item", counting)
    model.train_step(batch(), wrapper)
    assert calls == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1.0, "'loss_a' is float: 1.0"),
        ([torch.ones(1), 2], r"'loss_a' is list: \[tensor"),
        ([], "'loss_a' is an empty list"),
        ("0.5", "'loss_a' is str"),
    ],
)
def test_parse_losses_refuses_values_that_are_not_tensors(value, message):
    with pytest.raises(TypeError, match=message):
        Regressor().parse_losses({"loss_a": value})


def test_parse_losses_without_any_loss_key_says_so():
    with pytest.raises(ValueError, match=r"no key containing 'loss' \(keys: \['acc'\]\)"):
        Regressor().parse_losses({"acc": torch.ones(1)})


def test_parse_losses_of_a_non_dict_names_the_type():
    with pytest.raises(TypeError, match="must return a dict of losses, got Tensor"):
        Regressor().parse_losses(torch.ones(1))


def test_train_step_preprocesses_runs_loss_in_context_and_updates():
    model = Regressor()
    before = model.linear.weight.detach().clone()
    wrapper = StubOptimWrapper(model)
    log_vars = model.train_step(batch(), wrapper)
    assert [call[0] for call in wrapper.calls] == ["enter", "exit", "update"]
    assert wrapper.calls[0] == ("enter", "Regressor")
    assert set(log_vars) == {"loss", "loss_mse", "loss_parts", "mae"}
    updated = wrapper.calls[2][1]
    assert torch.equal(updated.detach(), log_vars["loss"])
    assert not torch.equal(model.linear.weight, before)


def test_train_step_runs_preprocessor_with_training_true():
    seen = []

    class Recording(BaseDataPreprocessor):
        def forward(self, data, training=False):
            seen.append(training)
            return super().forward(data, training)

    model = Regressor(data_preprocessor=Recording())
    model.train_step(batch(), StubOptimWrapper(model))
    model.val_step(batch())
    model.test_step(batch())
    assert seen == [True, False, False]


def test_val_and_test_step_predict():
    model = Regressor()
    expected = list(model.linear(batch()["inputs"]))
    for step in (model.val_step, model.test_step):
        predictions = step(batch())
        assert len(predictions) == 2
        assert all(torch.equal(a, b) for a, b in zip(predictions, expected, strict=True))


def test_run_forward_unpacks_tuples_and_lists():
    model = Regressor()
    data = batch()
    from_tuple = model._run_forward((data["inputs"], data["data_samples"]), mode="tensor")
    from_list = model._run_forward([data["inputs"]], mode="tensor")
    assert torch.equal(from_tuple, from_list)


def test_run_forward_refuses_other_types():
    with pytest.raises(
        TypeError, match="must return a dict, list or tuple for forward, got Tensor"
    ):
        Regressor()._run_forward(torch.ones(2, 2), mode="tensor")


def test_to_moves_the_preprocessor_device_and_dtype_only_moves_nothing():
    model = Regressor()
    model.to(torch.float64)
    assert model.data_preprocessor.device == torch.device("cpu")
    model.to("meta")
    assert model.data_preprocessor.device == torch.device("meta")
    assert model.linear.weight.device.type == "meta"
    model.to_empty(device="cpu")
    model.cpu()
    assert model.data_preprocessor.device == torch.device("cpu")
    model.to(device="meta", dtype=torch.float16)
    assert model.data_preprocessor.device == torch.device("meta")


def test_nested_preprocessors_follow_the_model():
    class Outer(Regressor):
        def __init__(self):
            super().__init__()
            self.inner = Regressor()

    model = Outer().to("meta")
    assert model.inner.data_preprocessor.device == torch.device("meta")


def test_to_returns_the_model():
    model = Regressor()
    assert model.to("cpu") is model and model.cpu() is model


def test_accelerator_move_to_a_device_of_another_type_says_so():
    with pytest.raises(ValueError, match=r"\.cuda\(\) was given the cpu device 'cpu'"):
        Regressor().cuda("cpu")


@pytest.mark.skipif(hasattr(torch, "npu"), reason="an NPU backend is installed")
def test_move_to_current_device_of_missing_backend_names_it():
    with pytest.raises(RuntimeError, match=r"no torch\.npu backend"):
        Regressor().npu()


def test_models_register_and_build_from_config():
    @MODELS.register_module(force=True)
    class RegisteredRegressor(Regressor):
        pass

    model = MODELS.build(dict(type="RegisteredRegressor"))
    assert isinstance(model, RegisteredRegressor)
    assert isinstance(model.data_preprocessor, BaseDataPreprocessor)


def test_train_step_with_treadle_optim_wrapper_and_accumulation():
    from treadle.runner.optim import OptimWrapper

    model = Regressor()
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=2)
    before = model.linear.weight.detach().clone()
    model.train_step(batch(), wrapper)
    assert torch.equal(model.linear.weight, before)  # first of two accumulated steps
    model.train_step(batch(), wrapper)
    assert not torch.equal(model.linear.weight, before)


def test_init_cfg_reaches_base_module():
    class Initialized(BaseModel):
        def __init__(self):
            super().__init__(init_cfg=dict(type="Constant", val=0.5, bias=0.0, layer="Linear"))
            self.linear = nn.Linear(2, 2)

        def forward(self, inputs, data_samples=None, mode="tensor"):
            return self.linear(inputs)

    model = Initialized()
    model.init_weights()
    assert torch.all(model.linear.weight == 0.5) and torch.all(model.linear.bias == 0)
