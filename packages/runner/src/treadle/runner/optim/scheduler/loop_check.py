"""check_schedulers_match_loop: catch epoch-based schedulers given to an iteration-based loop.

An IterBasedTrainLoop has no epochs: a scheduler with ``by_epoch=True`` would step once, at the
very end of training, and the run would silently keep its initial learning rate. The runner
calls this check after building the schedulers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def check_schedulers_match_loop(
    schedulers: Sequence[Any] | Mapping[str, Sequence[Any]], by_epoch_loop: bool
) -> None:
    """Raise a ValueError for an epoch-based scheduler when the train loop counts iterations.

    Args:
        schedulers: the built schedulers: a list, or a dict of lists (one per optimizer of an
            OptimWrapperDict).
        by_epoch_loop: whether the train loop is epoch-based (EpochBasedTrainLoop).

    Schedulers stepped with validation metrics (ReduceOnPlateau) step after each validation
    in either loop and are not checked.

    Example:
        >>> import torch
        >>> from treadle.runner.optim.scheduler import MultiStepLR
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> check_schedulers_match_loop([MultiStepLR(sgd, milestones=[8])], by_epoch_loop=True)
        >>> check_schedulers_match_loop(
        ...     [MultiStepLR(sgd, milestones=[8])], by_epoch_loop=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: param_scheduler[0] (MultiStepLR) has by_epoch=True, ...
    """
    if by_epoch_loop:
        return
    if isinstance(schedulers, Mapping):
        groups = [(f"param_scheduler[{key!r}]", value) for key, value in schedulers.items()]
    else:
        groups = [("param_scheduler", schedulers)]
    for label, group in groups:
        for index, scheduler in enumerate(group):
            if getattr(scheduler, "need_val_args", False):
                continue
            if getattr(scheduler, "by_epoch", False):
                raise ValueError(
                    f"{label}[{index}] ({type(scheduler).__name__}) has by_epoch=True, but the "
                    "train loop is iteration-based: it would step only once, at the end of "
                    "training. Set convert_to_iter_based=True in its config (its begin, end and "
                    "steps are then read as epochs and converted to iterations), or "
                    "by_epoch=False with the values counted in iterations."
                )
