"""Random generator states of several processes: gathered for a checkpoint, picked on resume.

Rank 0 writes the checkpoint, so without gathering it holds rank 0's generators only. With
``randomness=dict(diff_rank_seed=True)`` the ranks' streams differ on purpose; giving every rank
rank 0's state would make them draw the same numbers after a resume, so the other ranks then
continue from a seed derived from that state and their rank (deterministic, but not the
numbers of the uninterrupted run: :func:`gather_rng_states` on every rank gives exactness).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from treadle.dist import all_gather_object, get_dist_info
from treadle.logging import print_log

from .rng_state import capture_rng_state


def gather_rng_states(state: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every rank's generator states (``state``, by default the current ones), indexed by rank
    (a collective: call it on all ranks).

    Example:
        >>> len(gather_rng_states())  # one process
        1
    """
    _, world_size = get_dist_info()
    if state is None:
        state = capture_rng_state()
    if world_size == 1:
        return [state]
    return all_gather_object(state)


def pick_rng_state(
    saved: Mapping[str, Any], diff_rank_seed: bool
) -> tuple[Mapping[str, Any] | None, int | None]:
    """(the generator state this rank restores, or None; the rank to derive a seed for after
    restoring it, or None) from a saved loop state."""
    rank, world_size = get_dist_info()
    per_rank = saved.get("rng_per_rank")
    if isinstance(per_rank, Sequence) and len(per_rank) == world_size:
        return per_rank[rank], None
    state = saved.get("rng")
    if state is None or world_size == 1 or saved.get("rank", 0) == rank or not diff_rank_seed:
        return state, None
    print_log(
        f"the checkpoint holds the random state of rank {saved.get('rank', 0)} only: rank "
        f"{rank} continues from a seed derived from it (diff_rank_seed=True keeps the ranks' "
        f"streams apart), so its random draws differ from the uninterrupted run",
        logger="current",
        level=logging.WARNING,
    )
    return state, rank


def reseed_for_rank(rank: int) -> None:
    """Seed every generator from a number drawn from the restored torch generator and ``rank``
    (all ranks draw the same number; adding the rank sets them apart)."""
    base = int(torch.randint(0, 2**31 - 1, (1,)).item())
    seed = base + rank
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
