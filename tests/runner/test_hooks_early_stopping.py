"""EarlyStoppingHook: the rule guessed from the metric name, patience and min_delta, the
stopping threshold, non-finite values, a missing metric, its saved state."""

from __future__ import annotations

import math

import pytest
from hooks_a_stub_runner import HooksStubRunner
from runner_toys import captured_log

from treadle.runner.hooks import EarlyStoppingHook


@pytest.fixture
def runner(tmp_path):
    return HooksStubRunner(tmp_path)


@pytest.mark.parametrize(
    ("monitor", "rule"),
    [
        ("acc", "greater"),
        ("accuracy/top1", "greater"),
        ("coco/bbox_mAP", "greater"),
        ("mIoU", "greater"),
        ("loss", "less"),
        ("val_loss", "less"),
    ],
)
def test_rule_from_the_metric_name(monitor, rule):
    assert EarlyStoppingHook(monitor).rule == rule


def test_unknown_metric_names_need_a_rule():
    with pytest.raises(ValueError, match="cannot tell whether a bigger or a smaller 'psnr'"):
        EarlyStoppingHook("psnr")
    assert EarlyStoppingHook("psnr", rule="greater").rule == "greater"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(rule="bigger"), "rule must be 'greater' or 'less', got 'bigger'"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EarlyStoppingHook("acc", **kwargs)


def feed(runner, hook, values, key="acc"):
    """Validate with each value; return the index of the validation that stopped training."""
    for index, value in enumerate(values):
        hook.after_val_epoch(runner, metrics={key: value})
        if runner.train_loop.stop_training:
            return index
    return None


def test_stops_after_patience_validations_without_improvement(runner):
    hook = EarlyStoppingHook("acc", patience=2, min_delta=0.1)
    with captured_log() as log:
        # 0.55 is not better than 0.5 by min_delta: it counts as no improvement.
        stopped = feed(runner, hook, [0.5, 0.55, 0.7, 0.75, 0.72, 0.9])
    assert stopped == 4
    assert hook.best_score == 0.7
    assert "did not improve in the last 2 validations; the best value was 0.700" in log.messages[-1]


def test_less_is_better_for_losses(runner):
    hook = EarlyStoppingHook("loss", patience=1, min_delta=0.0)
    assert feed(runner, hook, [1.0, 0.8, 0.9], key="loss") == 2
    assert hook.best_score == 0.8


def test_stopping_threshold(runner):
    hook = EarlyStoppingHook("acc", stopping_threshold=0.9)
    with captured_log() as log:
        assert feed(runner, hook, [0.5, 0.95]) == 1
    assert "acc = 0.95 is greater than 0.9" in log.messages[-1]


def test_patience_zero_with_a_threshold_stops_at_the_threshold(runner):
    # MMEngine's way to stop on the threshold: patience=0 (any validation without
    # improvement stops too). The best score keeps the evaluator's value (here a tensor).
    torch = pytest.importorskip("torch")
    hook = EarlyStoppingHook("acc", stopping_threshold=98.5, patience=0)
    values = torch.linspace(98, 99, 8)
    assert feed(runner, hook, values) == 4
    assert isinstance(hook.best_score, torch.Tensor)
    assert hook.best_score.item() == pytest.approx(98 + 4 / 7)
    assert hook.state_dict()["best_score"] == pytest.approx(98 + 4 / 7)


def test_patience_zero_stops_at_the_first_validation_without_improvement(runner):
    hook = EarlyStoppingHook("acc", patience=0, min_delta=0.0)
    assert feed(runner, hook, [0.5, 0.6, 0.55]) == 2


def test_a_negative_patience_warns_and_acts_as_zero(runner):
    with pytest.warns(UserWarning, match="patience=-1 is negative; it stops training at the first"):
        hook = EarlyStoppingHook("acc", patience=-1, min_delta=0.0)
    assert feed(runner, hook, [0.5, 0.4]) == 1


def test_a_non_finite_metric_stops(runner):
    hook = EarlyStoppingHook("loss")
    with captured_log() as log:
        assert feed(runner, hook, [1.0, math.nan], key="loss") == 1
    assert "loss = nan is not finite" in log.messages[-1]
    relaxed = EarlyStoppingHook("loss", check_finite=False, patience=5)
    runner.train_loop.stop_training = False
    assert feed(runner, relaxed, [1.0, math.inf], key="loss") is None


def test_a_missing_metric_warns_or_raises(runner):
    hook = EarlyStoppingHook("acc")
    with pytest.warns(
        UserWarning, match=r"'acc' is not among the validation results \(they are: 'mse'\)"
    ):
        hook.after_val_epoch(runner, metrics={"mse": 1.0})
    strict = EarlyStoppingHook("acc", strict=True)
    with pytest.raises(RuntimeError, match=r"'acc' is not among .*set strict=False"):
        strict.after_val_epoch(runner, metrics={"mse": 1.0})


def test_a_train_loop_without_stop_training_is_refused(runner):
    runner.train_loop = object()
    with pytest.raises(
        TypeError, match="train loop with a `stop_training` attribute; object has none"
    ) as caught:
        EarlyStoppingHook("acc").before_run(runner)
    # MMEngine asserts there: its users catch AssertionError.
    assert isinstance(caught.value, AssertionError)


def test_state_survives_a_resume(runner):
    hook = EarlyStoppingHook("acc", patience=3)
    feed(runner, hook, [0.5, 0.4, 0.3])
    resumed = EarlyStoppingHook("acc", patience=3)
    resumed.load_state_dict(hook.state_dict())
    assert (resumed.best_score, resumed.wait_count) == (0.5, 2)
    assert feed(runner, resumed, [0.2]) == 0
