"""CountIters: a hook counting the iterations a runner trained (a resumed one only those left),
for the multi-process scenarios that check where a resume started."""

from __future__ import annotations

from treadle.runner.hooks import Hook


class CountIters(Hook):
    """How many iterations this runner trained.

    Example:
        >>> counter = CountIters()
        >>> runner = Runner(..., custom_hooks=[counter])  # doctest: +SKIP
        >>> runner.train(); counter.trained  # doctest: +SKIP
        10
    """

    def __init__(self) -> None:
        self.trained = 0

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        self.trained += 1
