"""treadle.runner.model (BaseModel, data preprocessors, utils) against MMEngine 0.10's
mmengine.model: the same calls through both, compared as a user observes them.

Deliberate differences (docs/runner/models.md) have their own ``test_deliberate_*`` tests:
log variables are detached, 'loss' in log_vars is always the total, a loss dict without any
'loss' key and channel swaps of non-3-channel images are errors.

Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mmengine")

import mmengine.model as mm
import torch
import torch.nn as nn
from mmengine.optim import OptimWrapper

import treadle.runner.model as tr

SIDES = {"mmengine": mm, "treadle": tr}


def toy_model(module):
    """The same user model, written once, subclassing each side's BaseModel."""

    class Toy(module.BaseModel):
        def __init__(self, data_preprocessor=None):
            super().__init__(data_preprocessor=data_preprocessor)
            torch.manual_seed(0)
            self.conv = nn.Conv2d(3, 2, 3)
            self.head = nn.Linear(2, 1)

        def forward(self, inputs, data_samples=None, mode="tensor"):
            outputs = self.head(self.conv(inputs).mean((2, 3)))
            if mode == "loss":
                targets = torch.stack(data_samples)
                return {
                    "loss_mse": ((outputs - targets) ** 2).mean(),
                    "loss_l1": [(outputs - targets).abs(), outputs.abs()],
                    "pred_mean": outputs.mean().detach(),
                }
            if mode == "predict":
                return list(outputs.detach())
            return outputs

    return Toy


def images(seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.randint(0, 256, (3, 5, 7), generator=generator, dtype=torch.uint8),
        torch.randint(0, 256, (3, 6, 4), generator=generator, dtype=torch.uint8),
    ]


def both(function):
    return {name: function(module) for name, module in SIDES.items()}


def assert_same(results):
    mine, theirs = results["treadle"], results["mmengine"]
    if isinstance(theirs, torch.Tensor):
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
        torch.testing.assert_close(mine, theirs, rtol=0, atol=0)
    elif isinstance(theirs, dict):
        assert list(mine) == list(theirs)
        for key in theirs:
            assert_same({"treadle": mine[key], "mmengine": theirs[key]})
    elif isinstance(theirs, (list, tuple)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs, strict=True):
            assert_same({"treadle": a, "mmengine": b})
    else:
        assert mine == theirs


# --- parse_losses ---

LOSS_CASES = {
    "one loss": lambda: {"loss": torch.tensor([1.0, 3.0])},
    "losses and a metric": lambda: {
        "loss_cls": torch.tensor([[0.5, 1.5]]),
        "loss_bbox": [torch.tensor(1.0), torch.tensor([2.0, 4.0])],
        "acc": torch.tensor(0.25),
    },
    "key containing loss": lambda: {"aux_loss": torch.tensor(2.0), "top1": torch.tensor(3.0)},
}


@pytest.mark.parametrize("case", LOSS_CASES)
def test_parse_losses(case):
    def run(module):
        loss, log_vars = toy_model(module)().parse_losses(LOSS_CASES[case]())
        return loss, {key: value.detach() for key, value in log_vars.items()}

    assert_same(both(run))


@pytest.mark.parametrize(
    "losses", [{"loss": 1.0}, {"loss": [torch.tensor(1.0), 2.0]}, {"loss": "x"}]
)
def test_parse_losses_refuses_the_same_values(losses):
    for module in SIDES.values():
        with pytest.raises(TypeError):
            toy_model(module)().parse_losses(losses)


def test_deliberate_log_vars_are_detached():
    value = torch.tensor(2.0, requires_grad=True)
    _, theirs = toy_model(mm)().parse_losses({"loss": value * 1})
    _, mine = toy_model(tr)().parse_losses({"loss": value * 1})
    assert theirs["loss"].requires_grad and not mine["loss"].requires_grad


def test_deliberate_loss_in_log_vars_is_the_total():
    losses = {"loss": torch.tensor(1.0), "loss_aux": torch.tensor(2.0)}
    _, theirs = toy_model(mm)().parse_losses(losses)
    _, mine = toy_model(tr)().parse_losses(losses)
    assert theirs["loss"].item() == 1.0  # MMEngine logs the 'loss' entry, not the total
    assert mine["loss"].item() == 3.0


def test_deliberate_no_loss_key_is_an_error():
    loss, _ = toy_model(mm)().parse_losses({"acc": torch.tensor(1.0)})
    assert loss == 0  # an int: MMEngine's update_params fails later on it
    with pytest.raises(ValueError, match="no key containing 'loss'"):
        toy_model(tr)().parse_losses({"acc": torch.tensor(1.0)})


# --- data preprocessors ---

PREPROCESSOR_CASES = {
    "defaults": dict(),
    "mean std": dict(mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375]),
    "padding": dict(pad_size_divisor=8, pad_value=-1),
    "bgr_to_rgb": dict(bgr_to_rgb=True, mean=[1, 2, 3], std=[2, 2, 2], pad_size_divisor=4),
    "rgb_to_bgr gray mean": dict(rgb_to_bgr=True, mean=[127.5], std=[127.5]),
}


@pytest.mark.parametrize("case", PREPROCESSOR_CASES)
def test_img_preprocessor_on_a_list_of_images(case):
    def run(module):
        preprocessor = module.ImgDataPreprocessor(**PREPROCESSOR_CASES[case])
        return preprocessor({"inputs": images(), "data_samples": ["a", "b"]}, training=True)

    assert_same(both(run))


@pytest.mark.parametrize("case", PREPROCESSOR_CASES)
def test_img_preprocessor_on_a_batched_tensor(case):
    batch = torch.stack([image[:, :5, :4] for image in images()])

    def run(module):
        return module.ImgDataPreprocessor(**PREPROCESSOR_CASES[case])({"inputs": batch})

    assert_same(both(run))


def test_base_preprocessor_cast_data():
    data = {"inputs": [torch.ones(2)], "data_samples": ("a", torch.zeros(1)), "n": None}
    assert_same(both(lambda module: module.BaseDataPreprocessor()(data)))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(bgr_to_rgb=True, rgb_to_bgr=True),
        dict(mean=[1, 2, 3]),
        dict(mean=[1, 2], std=[1, 2]),
    ],
)
def test_img_preprocessor_refuses_the_same_arguments(kwargs):
    with pytest.raises(AssertionError):
        mm.ImgDataPreprocessor(**kwargs)
    with pytest.raises(ValueError):
        tr.ImgDataPreprocessor(**kwargs)


def test_deliberate_channel_swap_of_gray_images_is_an_error():
    gray = {"inputs": [torch.ones(1, 2, 2)]}
    with pytest.raises(IndexError):
        mm.ImgDataPreprocessor(bgr_to_rgb=True)(dict(gray))
    with pytest.raises(ValueError, match="needs 3 channels"):
        tr.ImgDataPreprocessor(bgr_to_rgb=True)(dict(gray))


# --- utils ---

STACK_CASES = {
    "same sizes": lambda: ([torch.ones(3, 4, 4), torch.zeros(3, 4, 4)], 1, 0),
    "pad to max": lambda: ([torch.ones(3, 2, 5), torch.ones(3, 4, 3)], 1, 0),
    "divisor and value": lambda: ([torch.ones(1, 5, 7), torch.ones(1, 9, 2)], 8, -3),
    "2d": lambda: ([torch.ones(2, 3), torch.ones(2, 5)], 4, 1),
    "4d": lambda: ([torch.ones(1, 2, 3, 4), torch.ones(1, 3, 3, 1)], 2, 0),
    "uint8": lambda: (images(), 16, 255),
}


@pytest.mark.parametrize("case", STACK_CASES)
def test_stack_batch(case):
    assert_same(both(lambda module: module.stack_batch(*STACK_CASES[case]())))


def test_merge_dict():
    dicts = ({"a": 1, "b": 2}, {"b": 3}, {"c": torch.ones(1)})
    assert_same(both(lambda module: module.merge_dict(*dicts)))


def test_convert_and_revert_sync_batchnorm():
    def run(module):
        torch.manual_seed(0)
        model = nn.Sequential(
            nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(4))
        )
        converted = module.convert_sync_batchnorm(model)
        kinds = [type(m).__name__ for m in converted.modules()]
        reverted = module.revert_sync_batchnorm(converted)
        return kinds, [type(m).__name__ for m in reverted.modules()], reverted.state_dict()

    assert_same(both(run))


# --- train, val and test steps ---


def test_train_val_test_steps_on_a_toy_model():
    def run(module):
        model = toy_model(module)(
            data_preprocessor=dict(
                type="ImgDataPreprocessor", mean=[127.5], std=[127.5], pad_size_divisor=4
            )
        )
        wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.05))
        logs = []
        for step in range(3):
            data = {"inputs": images(step), "data_samples": [torch.ones(1), torch.zeros(1)]}
            log_vars = model.train_step(data, wrapper)
            logs.append({key: value.detach() for key, value in log_vars.items()})
        data = {"inputs": images(9), "data_samples": None}
        return logs, model.val_step(data), model.test_step(data), model.state_dict()

    assert_same(both(run))
