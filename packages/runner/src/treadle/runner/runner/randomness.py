"""Seeding every random generator the training touches, as MMEngine's ``set_random_seed``."""

from __future__ import annotations

import logging
import random

import numpy as np
import torch

from treadle.dist import get_rank, sync_random_seed
from treadle.logging import print_log


def set_random_seed(
    seed: int | None = None, deterministic: bool = False, diff_rank_seed: bool = False
) -> int:
    """Seed Python's ``random``, NumPy and torch (CPU and every accelerator) and return the seed.

    Args:
        seed: the seed; None draws one on rank 0 and shares it with every rank.
        deterministic: make cuDNN and torch pick deterministic algorithms (slower); turns
            ``torch.backends.cudnn.benchmark`` off, with a warning when it was on.
        diff_rank_seed: add the rank to the seed, so that each process draws differently
            (augmentations); samplers still share one order.

    Example:
        >>> set_random_seed(42)
        42
        >>> a = torch.rand(1); set_random_seed(42); bool(torch.rand(1) == a)
        42
        True
    """
    if seed is None:
        seed = sync_random_seed()
    elif not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(
            f"randomness.seed must be an int or None, got {type(seed).__name__}: {seed!r}"
        )
    if diff_rank_seed:
        seed += get_rank()
    random.seed(seed)
    # NumPy accepts seeds in [0, 2**32); a rank offset or a negative seed must not fail here.
    np.random.seed(seed % 2**32)
    # torch.manual_seed also seeds CUDA and every other accelerator torch knows about.
    torch.manual_seed(seed)
    if deterministic:
        if torch.backends.cudnn.benchmark:
            print_log(
                "randomness.deterministic=True turns torch.backends.cudnn.benchmark off "
                "(env_cfg.cudnn_benchmark is ignored), so that cuDNN picks its algorithms "
                "deterministically",
                logger="current",
                level=logging.WARNING,
            )
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True)
    return seed
