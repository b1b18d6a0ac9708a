"""A checkpoint written while validation runs inside training (save_best) holds the random
generators training continues from, not those validation drew from."""

from __future__ import annotations

import torch
from runner_toy_model import toy_cfg

from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner


class DrawsDuringValidation(Hook):
    """Records torch's generator when validation starts, draws from it, and records what the
    train loop's state says in the middle of validation."""

    def __init__(self) -> None:
        self.before: list[torch.Tensor] = []
        self.saved: list[torch.Tensor] = []

    def before_val(self, runner) -> None:
        self.before.append(torch.get_rng_state())

    def after_val_epoch(self, runner, metrics=None) -> None:
        torch.rand(100)  # validation's own draws
        self.saved.append(runner.train_loop.state_dict()["rng"]["torch"])


def test_loop_state_during_validation_holds_the_generators_of_training(tmp_path):
    hook = DrawsDuringValidation()
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=[hook], default_hooks=dict(checkpoint=None)))
    runner.train()
    assert len(hook.saved) == 3
    for before, saved in zip(hook.before, hook.saved, strict=True):
        assert torch.equal(before, saved)
    # After training, the state is the live generators again.
    assert torch.equal(runner.train_loop.state_dict()["rng"]["torch"], torch.get_rng_state())
