"""The messages of ``compute_loss=True`` misuse: a model with no loss mode, a loss mode that
needs inputs the validation data lacks, a bad value, a metric name the loss would replace."""

from __future__ import annotations

import pytest
import torch
from runner_toy_model import ToyModel, toy_cfg
from valloss_toys import val_loader

from treadle.runner.loops.eval_loss_forward import EvalForward, batch_size
from treadle.runner.runner import Runner


def runner_of(tmp_path, model, stage="val", **overrides):
    overrides.setdefault(f"{stage}_cfg", dict(compute_loss=True))
    overrides.setdefault(f"{stage}_dataloader", val_loader(length=7, batch_size=2))
    return Runner(**toy_cfg(tmp_path, model=model, param_scheduler=None, **overrides))


def test_compute_loss_must_be_a_bool(tmp_path):
    runner = runner_of(tmp_path, dict(type="RunnerToyModel"), val_cfg=dict(compute_loss="yes"))
    with pytest.raises(TypeError, match=r"val_cfg compute_loss must be True or False, got 'yes'"):
        runner.val()


def test_a_model_whose_loss_mode_is_not_implemented_is_named(tmp_path):
    runner = runner_of(tmp_path, dict(type="ValLossNoLossModeModel"))
    with pytest.raises(TypeError) as caught:
        runner.val()
    assert str(caught.value) == (
        "val_cfg compute_loss=True: NoLossModeModel has no loss mode: forward(mode='loss') "
        "raised NotImplementedError(this model only predicts)"
    )


def test_a_loss_mode_that_returns_no_dict_is_named_in_the_test_loop(tmp_path):
    runner = runner_of(tmp_path, dict(type="ValLossListLossModel"), stage="test")
    with pytest.raises(TypeError) as caught:
        runner.test()
    assert str(caught.value) == (
        "test_cfg compute_loss=True: ListLossModel has no loss mode: forward(mode='loss') "
        "returned Tensor, not a dict of losses"
    )


def test_a_missing_argument_of_the_loss_is_named(tmp_path):
    runner = runner_of(tmp_path, dict(type="ValLossNeedsGtModel"))
    with pytest.raises(ValueError, match=r"the loss mode of NeedsGtModel needs 'gt', which the "
                       r"val data lacks \(the preprocessed batch holds \['inputs', "
                       r"'data_samples'\]"):  # fmt: skip
        runner.val()


def test_a_missing_key_of_the_data_samples_is_named(tmp_path):
    loader = val_loader(length=7, batch_size=2, dataset="ValLossTargetOnlyDataset")
    runner = runner_of(tmp_path, dict(type="ValLossLabelKeyModel"), val_dataloader=loader)
    with pytest.raises(ValueError, match=r"the loss mode of LabelKeyModel needs 'label', which "
                       r"the val data lacks.*KeyError: 'label'"):  # fmt: skip
        runner.val()


class UnlabelledPredictor(ToyModel):
    """Predicts without targets (so an unlabelled set validates), but its loss needs them."""

    def forward(self, inputs, data_samples=None, mode="tensor"):
        if mode == "predict":
            outputs = self.head(torch.stack(list(inputs)))
            return [dict(pred=p, gt=torch.tensor(0.0)) for p in outputs]
        return super().forward(inputs, data_samples, mode)


def test_targets_absent_from_the_validation_set_are_named(tmp_path):
    loader = val_loader(length=7, batch_size=2, dataset="ValLossInputsOnlyDataset")
    runner = runner_of(tmp_path, UnlabelledPredictor(), val_dataloader=loader)
    with pytest.raises(ValueError, match=r"the loss mode of UnlabelledPredictor needs "
                       r"'data_samples', which the val data lacks \(the preprocessed batch "
                       r"holds \['inputs'\].*TypeError: unsupported operand"):  # fmt: skip
        runner.val()


def test_a_metric_the_loss_would_overwrite_is_refused(tmp_path):
    evaluator = dict(type="RunnerToyMetric", values=[dict(loss=1.0)], prefix="val")
    runner = runner_of(tmp_path, dict(type="RunnerToyModel"), val_evaluator=evaluator)
    message = (
        r"val_cfg compute_loss=True reports \['val/loss'\], but the val_evaluator already "
        r"returns metrics of those names"
    )
    with pytest.raises(ValueError, match=message):
        runner.val()


def test_a_model_that_is_no_base_model_is_named():
    with pytest.raises(TypeError, match=r"val_cfg compute_loss=True needs a BaseModel .* the "
                       r"model is Linear, which has no data_preprocessor"):  # fmt: skip
        EvalForward(torch.nn.Linear(2, 2), "val")


def test_other_errors_of_the_loss_forward_keep_their_type_with_a_note():
    class Broken(ToyModel):
        def forward(self, inputs, data_samples=None, mode="tensor"):
            if mode == "loss":
                raise ValueError("shapes disagree")
            return super().forward(inputs, data_samples, mode)

    forward = EvalForward(Broken(), "val")
    batch = dict(inputs=[torch.zeros(2)], data_samples=[torch.tensor(0.0)])
    with pytest.raises(ValueError, match="shapes disagree") as caught:
        forward(batch)
    assert caught.value.__notes__ == [
        "while computing the val loss of Broken (val_cfg compute_loss=True)"
    ]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (dict(inputs=torch.zeros(3, 2), data_samples=[1, 2]), 2),
        (dict(inputs=torch.zeros(3, 2)), 3),
        (dict(inputs=[torch.zeros(2)] * 4, data_samples=None), 4),
        ((torch.zeros(5, 2), torch.zeros(5)), 5),
        (dict(inputs=torch.tensor(1.0)), 1),
    ],
)
def test_the_sample_count_of_a_batch(data, expected):
    assert batch_size(data) == expected
