"""A warning for epoch-based schedulers in an iteration-based train loop.

An IterBasedTrainLoop has no epochs: a scheduler with ``by_epoch=True`` steps once, at the very
end of training, so the run keeps its initial learning rate. MMEngine runs such a config as it
is written (some do it on purpose: a scheduler that only acts at the end), and so does the
Runner; it says so in the log, with the two ways to count the scheduler in iterations.
"""

from __future__ import annotations

import logging
from typing import Any

from treadle.runner.optim import check_schedulers_match_loop


def warn_epoch_schedulers_in_iter_loop(
    schedulers: Any, iteration_loop: bool, logger: logging.Logger
) -> bool:
    """Log a warning when ``iteration_loop`` and one of ``schedulers`` (a list, or a dict of
    lists per optimizer) is epoch-based; returns whether it warned.

    Example:
        >>> import torch
        >>> from treadle.logging import MMLogger
        >>> from treadle.runner.optim.scheduler import MultiStepLR
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> logger = MMLogger.get_instance('scheduler_loop_doc')
        >>> warn_epoch_schedulers_in_iter_loop([MultiStepLR(sgd, milestones=[8])], False, logger)
        False
    """
    if not iteration_loop:
        return False
    try:
        # The one place that knows which schedulers step per epoch (ReduceOnPlateau is exempt).
        check_schedulers_match_loop(schedulers, by_epoch_loop=False)
    except ValueError as mismatch:
        logger.warning(f"{mismatch} The run goes on with it as written, as MMEngine's does.")
        return True
    return False
