"""``worker_init_fn``: distinct, reproducible random streams in each DataLoader worker."""

from __future__ import annotations

import random
import warnings

import numpy as np
import torch


def worker_init_fn(
    worker_id: int,
    num_workers: int,
    rank: int,
    seed: int,
    disable_subprocess_warning: bool = False,
) -> None:
    """Seed Python's, NumPy's and torch's generators of one worker with
    ``num_workers * rank + worker_id + seed``, so that no two workers of any rank draw the
    same augmentations and a rerun with the same seed draws them again.

    Example:
        >>> from functools import partial
        >>> init = partial(worker_init_fn, num_workers=4, rank=0, seed=42)
        >>> loader = DataLoader(dataset, num_workers=4, worker_init_fn=init)  # doctest: +SKIP
    """
    worker_seed = num_workers * rank + worker_id + seed
    np.random.seed(worker_seed)
    random.seed(worker_seed)
    torch.manual_seed(worker_seed)
    if disable_subprocess_warning and worker_id != 0:
        # The other workers repeat the first one's warnings; keep only its copy.
        warnings.simplefilter("ignore")
