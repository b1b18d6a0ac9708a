"""Device copies made ahead of a training step, for the data preprocessor to use in its place.

The train loop copies the tensors of the next batch to the device on a side stream
(treadle.runner.loops.device_prefetch) while the hooks and the step keep the batch the
DataLoader gave: hooks see the host batch as in MMEngine, and ``model.train_step`` receives it.
When :meth:`BaseDataPreprocessor.cast_data` meets one of those host tensors, it takes the
copy from this table instead of copying again. A tensor is matched by identity and by its
version counter: a hook that replaced the tensor, or changed it in place, gets its own tensor
moved as before, never the stale copy.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch


class PrefetchedCopies:
    """The device copies of the host tensors of the batch being trained.

    Args:
        device: where the copies are (a preprocessor moved elsewhere since takes none).

    :meth:`put` is called by the loop with each batch (it replaces the previous one's);
    :meth:`take` by the data preprocessor, once per host tensor: a copy is handed out once.
    ``hits`` counts the copies taken since the last :meth:`put` (the loop stops copying
    for a model whose preprocessor never takes them).

    Example:
        >>> host = torch.ones(2)
        >>> table = PrefetchedCopies(torch.device('cpu'))
        >>> table.put([(host, host.clone())])
        >>> table.take(host, torch.device('cpu')) is not None
        True
        >>> table.put([(host, host.clone())])
        >>> _ = host.add_(1)  # changed in place after the copy: the copy is stale
        >>> table.take(host, torch.device('cpu')) is None
        True
    """

    __slots__ = ("_copies", "device", "hits")

    def __init__(self, device: torch.device) -> None:
        self.device = device
        # id(host) -> (host, its version when copied, the copy); the host tensor is held so
        # that its id cannot be reused by another tensor while the entry lives.
        self._copies: dict[int, tuple[torch.Tensor, int, torch.Tensor]] = {}
        self.hits = 0

    def put(self, pairs: Iterable[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Hold ``(host tensor, device copy)`` pairs in place of the previous ones."""
        self._copies = {id(host): (host, host._version, copy) for host, copy in pairs}
        self.hits = 0

    def clear(self) -> None:
        """Drop every copy (the loop is done with its batches)."""
        self._copies = {}
        self.hits = 0

    def take(self, host: torch.Tensor, device: torch.device) -> torch.Tensor | None:
        """The copy of ``host`` on ``device`` made before the step, or None: none was made, the
        tensor was changed in place since, or the copies are for another device."""
        entry = self._copies.pop(id(host), None)
        if entry is None:
            return None
        held, version, copy = entry
        if held is not host or host._version != version or device != self.device:
            return None
        self.hits += 1
        return copy

    def __len__(self) -> int:
        return len(self._copies)

    # A model copied (an EMA model, a deepcopy for export) or pickled gets an empty table:
    # the copies belong to the running loop and its device.
    def __deepcopy__(self, memo: dict[int, Any]) -> PrefetchedCopies:
        return PrefetchedCopies(self.device)

    def __reduce__(self) -> tuple[type, tuple]:
        return (PrefetchedCopies, (self.device,))
