"""``BaseLoop``: what every loop has: its runner and its dataloader."""

from __future__ import annotations

import logging
from abc import ABCMeta, abstractmethod
from collections.abc import Mapping
from typing import Any

from treadle.logging import print_log


class BaseLoop(metaclass=ABCMeta):
    """A loop over one dataloader, run by ``run()``; subclasses say what one pass does.

    ``dataloader`` is a DataLoader or the config of one, built with the runner's seed (a
    different seed per rank when ``randomness=dict(diff_rank_seed=True)``).

    Example:
        >>> class CountLoop(BaseLoop):
        ...     def run(self):
        ...         return sum(1 for _ in self.dataloader)
        >>> CountLoop(runner, [[1], [2]]).run()  # doctest: +SKIP
        2
    """

    def __init__(self, runner: Any, dataloader: Any) -> None:
        self._runner = runner
        if isinstance(dataloader, Mapping):
            diff_rank_seed = runner._randomness_cfg.get("diff_rank_seed", False)
            self.dataloader = runner.build_dataloader(
                dataloader, seed=runner.seed, diff_rank_seed=diff_rank_seed
            )
        else:
            self.dataloader = dataloader

    @property
    def runner(self) -> Any:
        """The runner this loop belongs to."""
        return self._runner

    @abstractmethod
    def run(self) -> Any:
        """Run the loop."""

    def _share_dataset_meta(self, *targets: Any, purpose: str) -> None:
        """Hand the dataset's ``metainfo`` to the visualizer (and the evaluator), or say why
        they will have none."""
        dataset = getattr(self.dataloader, "dataset", None)
        if hasattr(dataset, "metainfo"):
            for target in targets:
                target.dataset_meta = dataset.metainfo
            return
        print_log(
            f"dataset {type(dataset).__name__} has no metainfo: the dataset_meta of the "
            f"{purpose} is None",
            logger="current",
            level=logging.WARNING,
        )
