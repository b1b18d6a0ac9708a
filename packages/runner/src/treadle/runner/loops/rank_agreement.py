"""Ranks that decide together: one small all-reduce in which every rank tells whether its loss
went bad (and at which iteration) and whether a preemption signal reached it.

A rank that acted alone on what only it saw would leave the others waiting in a collective it
never enters: one rank skipping a batch while the others all-reduce gradients, one rank
stopping while the others train on. So the loss watch (at its check interval, before a
checkpoint, validation and an epoch's end) and the batch skipper (at each step, where it already
reads the loss) call :meth:`RankAgreement.agree`, and every rank acts on the same answer.

The exchange is one int64 vector of ``2 * world_size`` entries, reduced by sum: rank ``r``
writes its first non-finite iteration (1-based, 0 for none) at ``r`` and the number of the
signal it received (0 for none) at ``world_size + r``. Nothing is exchanged in a run of one
process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from treadle import dist


class RankAgreement:
    """What every rank of a train loop agrees on (see the module's docstring).

    ``signal`` is the preemption signal this rank received and has not yet told the others;
    ``on_stop`` (set by the runner's preemption handlers) is called on every rank with
    ``{rank: signal number}`` when any rank received one.

    Example:
        >>> agreement = RankAgreement()
        >>> agreement.active()  # one process: nothing to agree on
        False
        >>> agreement.agree(bad_iteration=7)  # the answer of this rank alone
        {0: 7}
    """

    def __init__(self) -> None:
        self.signal = 0
        self.on_stop: Callable[[Mapping[int, int]], None] | None = None

    @staticmethod
    def active() -> bool:
        """Whether there are other ranks to agree with."""
        return dist.get_world_size() > 1

    def agree(self, bad_iteration: int = 0) -> dict[int, int]:
        """``{rank: first non-finite iteration}`` of every rank whose loss went bad, given
        this rank's (``0``: none); calls ``on_stop`` when a rank received a preemption signal.

        A collective where there are other ranks: every rank calls it at the same point.
        """
        rank, world_size = dist.get_dist_info()
        if world_size == 1:
            return {rank: bad_iteration} if bad_iteration else {}
        flags = torch.zeros(2 * world_size, dtype=torch.int64)
        flags[rank] = bad_iteration
        flags[world_size + rank] = self.signal
        dist.all_reduce(flags)
        values = flags.tolist()
        signals = {r: s for r, s in enumerate(values[world_size:]) if s}
        if signals and self.on_stop is not None:
            self.on_stop(signals)
        return {r: iteration for r, iteration in enumerate(values[:world_size]) if iteration}


def describe_ranks(bad: Mapping[int, int]) -> str:
    """``'iteration 7 on rank 1'``, ``'iteration 7 on rank 1 and iteration 9 on rank 0'``: the
    earliest first."""
    order = sorted(bad.items(), key=lambda item: (item[1], item[0]))
    parts = [f"iteration {iteration} on rank {rank}" for rank, iteration in order]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
