"""The loops' checks through the real Runner: a NaN/inf loss stops training naming the
iteration, or is skipped with ``train_cfg=dict(..., skip_nonfinite_loss=True)``."""

from __future__ import annotations

import pytest

runner_module = pytest.importorskip("treadle.runner.runner")
Runner = getattr(runner_module, "Runner", None)
if Runner is None:
    pytest.skip("treadle.runner.runner has no Runner yet", allow_module_level=True)

from runner_toy_model import toy_cfg  # noqa: E402

from treadle.runner.loops import NonFiniteLossError  # noqa: E402


@pytest.mark.parametrize(("value", "shown"), [(float("nan"), "nan"), (float("inf"), "inf")])
def test_a_nonfinite_loss_stops_training_with_its_iteration(tmp_path, value, shown):
    model = dict(type="RunnerToyModel", nonfinite_from=5, nonfinite_value=value)
    runner = Runner(**toy_cfg(tmp_path, model=model))
    with pytest.raises(NonFiniteLossError, match=rf"loss is {shown} at iteration 6 \(epoch 2"):
        runner.train()
    # Found before the epoch-2 checkpoint was written.
    assert (tmp_path / "epoch_1.pth").exists()
    assert not (tmp_path / "epoch_2.pth").exists()


def test_skip_nonfinite_loss_in_train_cfg_finishes_training(tmp_path):
    model = dict(type="RunnerToyModel", nonfinite_from=5)
    train_cfg = dict(by_epoch=True, max_epochs=3, skip_nonfinite_loss=True)
    runner = Runner(**toy_cfg(tmp_path, model=model, train_cfg=train_cfg))
    runner.train()
    assert runner.iter == 12
    assert (tmp_path / "epoch_3.pth").exists()
