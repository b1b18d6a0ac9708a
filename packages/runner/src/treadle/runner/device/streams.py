"""A second stream on an accelerator, for host-to-device copies that overlap the compute.

A copy queued on the stream the model computes on waits for every kernel queued before it; a
blocking copy (``non_blocking=False``) also makes the host wait for them. Queued on a side
stream instead, from pinned host memory and with ``non_blocking=True``, the copy runs on the
device's copy engine while the compute goes on, and the host does not wait at all. The stream
that uses the copy then waits for it on the device (an event, no host sync), and the copy is
marked as used by that stream (``Tensor.record_stream``) so that the caching allocator does not
hand its memory to another tensor while kernels queued there still read it.

The streams are the device module's (``torch.cuda``, ``torch.xpu``, a vendor's ``torch.npu``)
where it has them, else torch's device-neutral ``torch.Stream`` and ``torch.accelerator``
(torch 2.7+). The CPU, ``meta`` and MPS have no side streams: :func:`side_stream_for` returns
None for them, and for any device whose backend cannot make one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import torch

# Device types without streams of their own: copies there are no copies, or run in order.
_NO_SIDE_STREAMS = frozenset({"cpu", "meta", "mps"})


def _module_streams(device_type: str) -> Any | None:
    """The device module (``torch.cuda``...) when it makes streams, selects and reports them."""
    module = getattr(torch, device_type, None)
    if all(hasattr(module, name) for name in ("Stream", "stream", "current_stream")):
        return module
    return None


def _generic_streams() -> bool:
    """Whether this torch has device-neutral streams usable as a context (torch 2.7+)."""
    accelerator = getattr(torch, "accelerator", None)
    stream = getattr(torch, "Stream", None)
    return (
        accelerator is not None
        and hasattr(accelerator, "current_stream")
        and stream is not None
        and hasattr(stream, "__enter__")
    )


class SideStream:
    """A stream beside the current one of ``device``: :meth:`copy` queues copies there,
    :meth:`hand_over` makes the current stream wait for them and marks them as used by it.

    Args:
        device: the accelerator (with its index) the copies go to.

    Example:
        >>> side = side_stream_for(torch.device('cuda', 0))  # doctest: +SKIP
        >>> copies, ready = side.copy([pinned_images])  # doctest: +SKIP
        >>> side.hand_over(copies, ready)  # before the first kernel that reads them
        ... # doctest: +SKIP
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._module = _module_streams(device.type)
        if self._module is not None:
            self.stream = self._module.Stream(device=device)
        else:
            self.stream = torch.Stream(device=device)

    def _selected(self) -> contextlib.AbstractContextManager:
        """A context in which this stream is the current one of its device."""
        if self._module is not None:
            return self._module.stream(self.stream)
        return self.stream

    def current(self) -> Any:
        """The stream the model computes on: the device's current one."""
        if self._module is not None:
            return self._module.current_stream(self.device)
        return torch.accelerator.current_stream(self.device)

    def move(self, tensor: torch.Tensor) -> torch.Tensor:
        """One copy, queued on the current stream (called inside :meth:`copy`)."""
        return tensor.to(self.device, non_blocking=True)

    def copy(self, tensors: Sequence[torch.Tensor]) -> tuple[list[torch.Tensor], Any]:
        """``tensors`` copied to the device on this stream without waiting, and the event the
        copies are done at. The host memory stays in use until then: a pinned tensor's block
        is kept by torch's host allocator until the event; a pageable one is read before the
        call returns."""
        with self._selected():
            copies = [self.move(tensor) for tensor in tensors]
        return copies, self.stream.record_event()

    def hand_over(self, copies: Sequence[torch.Tensor], ready: Any) -> None:
        """Make the current stream wait (on the device) for the copies that ``ready`` marks,
        and mark each copy as used by it, so that its memory is reused only after the kernels
        queued there by the time it is freed."""
        current = self.current()
        if ready is not None:
            current.wait_event(ready)
        for copy in copies:
            copy.record_stream(current)


def side_stream_for(device: torch.device | str | None) -> SideStream | None:
    """A :class:`SideStream` on ``device``, or None where there is none to have: the CPU,
    ``meta``, MPS, or a backend that cannot make a stream here.

    Example:
        >>> side_stream_for('cpu') is None
        True
    """
    if device is None:
        return None
    device = torch.device(device)
    if device.type in _NO_SIDE_STREAMS:
        return None
    if _module_streams(device.type) is None and not _generic_streams():
        return None
    try:
        return SideStream(device)
    except (RuntimeError, TypeError, ValueError, AssertionError):
        # No device of that type here, or its backend has no streams to give.
        return None
