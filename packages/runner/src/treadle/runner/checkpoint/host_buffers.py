"""HostBuffers: the host memory an asynchronous save copies the weights into.

The buffers of one save are kept for the next (a save of the same model needs the same
shapes), so that their pages are faulted in once; only the last save's are kept, so a model
whose shapes change does not grow them. Those of the first save can be made ready ahead of it
(``prefault``, run by a low-priority thread of the writer): otherwise the first background
copy faults in every page (about 0.1 s per 256 MiB on one core) on the way to the optimizer
step that waits for it.
"""

from __future__ import annotations

import threading

import torch

# Pages are written (faulted in) by pieces of this many elements, so that stopping is prompt.
_PIECE_ELEMENTS = 1 << 21


def buffer_key(tensor: torch.Tensor) -> tuple:
    """(shape, dtype, pinned): which host buffers can take a copy of ``tensor`` (pinned where
    it lives on an accelerator).

    Example:
        >>> buffer_key(torch.zeros(2, 3))
        ((2, 3), torch.float32, False)
    """
    pinned = tensor.device.type != "cpu" and torch.accelerator.is_available()
    return (tuple(tensor.shape), tensor.dtype, pinned)


class HostBuffers:
    """Host buffers for asynchronous saves, reused from one save to the next.

    Example:
        >>> buffers = HostBuffers()
        >>> buffers.prefault([buffer_key(torch.zeros(4))])  # ahead of the first save
        >>> first = buffers.take(torch.ones(4))  # a ready buffer of that shape
        >>> buffers.keep([first])  # the save is written: the next one reuses it
        >>> buffers.take(torch.ones(4)) is first
        True
    """

    def __init__(self) -> None:
        self._free: dict[tuple, list[torch.Tensor]] = {}
        self._lock = threading.Lock()  # the prefaulting thread adds to _free
        self._closed = threading.Event()  # the first save came: prefaulting stops

    def take(self, tensor: torch.Tensor) -> torch.Tensor:
        """A host buffer for a copy of ``tensor``: a kept one, or a new one."""
        shape, dtype, pinned = key = buffer_key(tensor)
        with self._lock:
            free = self._free.get(key)
            if free:
                return free.pop()
        return torch.empty(shape, dtype=dtype, pin_memory=pinned)

    def keep(self, buffers: list[torch.Tensor]) -> None:
        """Keep ``buffers`` (a written save's) for the next save, in place of any kept."""
        free: dict[tuple, list[torch.Tensor]] = {}
        for buffer in buffers:
            key = (tuple(buffer.shape), buffer.dtype, buffer.is_pinned())
            free.setdefault(key, []).append(buffer)
        with self._lock:
            self._free = free

    def stop_prefaulting(self) -> None:
        """The first save takes what is ready and allocates the rest itself."""
        self._closed.set()

    def prefaulting_stopped(self) -> bool:
        return self._closed.is_set()

    def prefault(self, keys: list[tuple]) -> None:
        """Allocate a buffer per key of ``keys`` (see :func:`buffer_key`) and write each of its
        pages once; stops at :meth:`stop_prefaulting`."""
        for shape, dtype, pinned in keys:
            if self._closed.is_set():
                return
            buffer = torch.empty(shape, dtype=dtype, pin_memory=pinned)
            flat = buffer.view(-1)
            for start in range(0, flat.numel(), _PIECE_ELEMENTS):
                flat[start : start + _PIECE_ELEMENTS].zero_()
            with self._lock:
                if not self._closed.is_set():
                    self._free.setdefault((shape, dtype, pinned), []).append(buffer)
