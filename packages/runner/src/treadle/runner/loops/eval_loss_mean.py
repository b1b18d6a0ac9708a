"""The mean of each loss term over a whole validation (or test) set, across every rank.

Each batch adds ``loss * n`` (n: its sample count) to a running sum that stays on the device, so
no step waits for it. At the end of the pass the sums and counts of every term are all-reduced
in one collective and divided: the result is the mean over every sample of the set, however
unevenly the ranks' shards and last batches are sized (a mean of per-rank means would weight a
short shard as much as a long one).
"""

from __future__ import annotations

import torch

import treadle.dist as dist


def _sum_dtype(device: torch.device) -> torch.dtype:
    # float64 keeps long sums exact enough; MPS has no float64.
    return torch.float32 if device.type == "mps" else torch.float64


class EvalLossMean:
    """Weighted sums of loss terms; :meth:`summary` reduces them across ranks and averages.

    Args:
        stage: 'val' or 'test': the prefix of the keys :meth:`summary` returns.

    Example:
        >>> mean = EvalLossMean('val')
        >>> mean.add({'loss': torch.tensor(1.0)}, 2)
        >>> mean.add({'loss': torch.tensor(4.0)}, 1)
        >>> mean.summary()
        {'val/loss': 2.0}
    """

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self._sums: dict[str, torch.Tensor] = {}
        self._counts: dict[str, int] = {}

    def clear(self) -> None:
        self._sums.clear()
        self._counts.clear()

    def keys(self) -> list[str]:
        """The keys :meth:`summary` will return for the terms added so far on this rank
        (``'<stage>/<term>'``)."""
        return [f"{self.stage}/{name}" for name in self._sums]

    def add(self, losses: dict[str, torch.Tensor], count: int) -> None:
        """Add one batch's losses (each the batch mean) for ``count`` samples."""
        for name, value in losses.items():
            value = value.detach()
            weighted = value.to(_sum_dtype(value.device)).reshape(-1)[0] * count
            previous = self._sums.get(name)
            self._sums[name] = weighted if previous is None else previous + weighted
            self._counts[name] = self._counts.get(name, 0) + count

    def _names(self) -> list[str]:
        local = list(self._sums)
        if dist.get_world_size() == 1:
            return local
        # A rank whose shard is empty, or a term only some batches report, must still pack the
        # same terms in the same order as every other rank.
        names = list(local)
        for rank_names in dist.all_gather_object(local):
            names.extend(name for name in rank_names if name not in names)
        return names

    def summary(self) -> dict[str, float]:
        """``{'<stage>/<term>': mean}`` over every sample of every rank ('loss' first, then
        the terms in the order the model reports them); empty when nothing was added anywhere.
        Every rank must call it (it is a collective when distributed)."""
        names = self._names()
        if not names:
            return {}
        device = next(iter(self._sums.values())).device if self._sums else None
        if device is None:
            device = dist.get_comm_device()
        dtype = _sum_dtype(device)
        zero = torch.zeros((), dtype=dtype, device=device)
        sums = [self._sums.get(name, zero).to(device) for name in names]
        counts = [
            torch.tensor(float(self._counts.get(name, 0)), dtype=dtype, device=device)
            for name in names
        ]
        packed = torch.stack(sums + counts)
        dist.all_reduce(packed, op="sum")
        values = packed.tolist()  # the one device sync of the pass
        totals, numbers = values[: len(names)], values[len(names) :]
        ordered = sorted(names, key=lambda name: name != "loss")
        index = {name: position for position, name in enumerate(names)}
        return {
            f"{self.stage}/{name}": totals[index[name]] / numbers[index[name]]
            for name in ordered
            if numbers[index[name]] > 0
        }
