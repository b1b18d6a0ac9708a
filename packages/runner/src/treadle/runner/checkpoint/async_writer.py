"""AsyncCheckpointWriter: whole-file checkpoint writes that do not stall the training step.

``save`` runs on the training thread and returns at once. What it does there is small: it
rebuilds the checkpoint's dicts and lists (the optimizer's state dict shares its per-parameter
dicts with the optimizer, which the next step fills) and copies the tensors that training may
change before its next optimizer step (buffers the forward pass updates, small states). The
tensors the caller says only an optimizer step changes (parameters, optimizer state) are copied
by a background thread into host buffers (pinned where they live on an accelerator, reused
from one save to the next so that no page is faulted in twice) while the next forward and
backward run. An optimizer step pre-hook (``guard``) blocks until that copy is complete, so
the file holds exactly the weights of the step that saved. The same thread then writes the
file with :func:`save_checkpoint` (temporary name, then rename: a crash leaves the previous
checkpoint), runs the callbacks given to ``after_write`` (moving the ``last_checkpoint``
pointer, deleting an old checkpoint), and keeps any error for ``wait`` to raise.
"""

from __future__ import annotations

import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import torch

from .io import save_checkpoint

# Tensors smaller than this are copied on the training thread: the copy costs less than the
# bookkeeping, and they may be states that change before the next step.
_BACKGROUND_BYTES = 1 << 20
# The background copy goes by pieces of this size, so that the training thread's own work
# (which needs the same memory bandwidth) is never queued behind one huge memcpy.
_CHUNK_ELEMENTS = 1 << 21
# How much less the background thread gets of a contended CPU (Linux nice, per thread): the
# training thread's compute comes first; the copy and the write take what is left over.
_BACKGROUND_NICENESS = 10
_THREAD_NAME = "treadle-checkpoint-writer"


def storage_key(tensor: torch.Tensor) -> int | None:
    """What identifies the memory ``tensor`` lives in (views of one parameter share it); None
    for a tensor without storage of its own (a DTensor, a sparse tensor)."""
    if tensor.layout != torch.strided or type(tensor) not in (torch.Tensor, torch.nn.Parameter):
        return None
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


def storage_keys(tensors: Iterable[torch.Tensor]) -> frozenset[int]:
    """The :func:`storage_key` of each of ``tensors`` that has one.

    Example:
        >>> len(storage_keys([torch.ones(2), torch.ones(3)]))
        2
    """
    keys = (storage_key(tensor) for tensor in tensors)
    return frozenset(key for key in keys if key is not None)


class _Job:
    """One save in flight: its copy, its write and the callbacks that follow the write."""

    def __init__(self, filepath: str) -> None:
        self.filepath = filepath
        self.copied = threading.Event()
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.callbacks: list[Callable[[], None]] = []
        self.closed = False  # no more callbacks are taken: the thread ran them (or failed)
        self.buffers: list[torch.Tensor] = []
        self.ready: Any = None  # an accelerator event: the state is final once it completed
        self.late: list[threading.Thread] = []  # callbacks given after the write was over


class AsyncCheckpointWriter:
    """Writes checkpoint dicts in a background thread, one save at a time.

    Example:
        >>> writer = AsyncCheckpointWriter()
        >>> params = [p.detach() for p in model.parameters()]  # doctest: +SKIP
        >>> writer.save(checkpoint, 'work_dirs/iter_100.pth',
        ...             background=storage_keys(params))  # doctest: +SKIP
        >>> writer.guard([optimizer])  # its next step waits for the copy  # doctest: +SKIP
        >>> writer.after_write(lambda: print('complete'))  # doctest: +SKIP
        >>> writer.wait()  # the file is complete, or its error is raised  # doctest: +SKIP
    """

    def __init__(self, write: Callable[..., None] = save_checkpoint) -> None:
        self._write = write
        self._job: _Job | None = None
        self._lock = threading.Lock()
        self._free: dict[tuple, list[torch.Tensor]] = {}  # host buffers of the previous save
        self._hooks: list[Any] = []

    # ------------------------------------------------------------------ the training thread

    def save(
        self,
        checkpoint: Mapping[str, Any],
        filepath: str,
        *,
        backend_args: dict | None = None,
        background: Collection[int] = (),
    ) -> None:
        """Start writing ``checkpoint`` to ``filepath`` and return. Tensors whose
        :func:`storage_key` is in ``background`` are copied by the background thread (the
        caller guarantees that nothing changes them before the guarded step); the others now.
        Waits for the previous save first (and raises its error)."""
        self.wait()
        job = _Job(os.fspath(filepath))
        copies: list[tuple[torch.Tensor, torch.Tensor]] = []
        snapshot = self._snapshot(dict(checkpoint), frozenset(background), copies, job)
        if any(source.device.type != "cpu" for source, _ in copies):
            job.ready = _record_event(copies)
        self._job = job
        thread = threading.Thread(
            target=self._run,
            args=(job, snapshot, copies, backend_args),
            name=_THREAD_NAME,
            # Not a daemon: a process that returns with a write in flight exits once the file
            # is complete, never with a temporary file in place of it.
            daemon=False,
        )
        thread.start()

    def guard(self, optimizers: Iterable[Any]) -> None:
        """Make the next ``step()`` of each of ``optimizers`` (torch optimizers) wait until
        the background copy of the save in flight is complete."""
        for optimizer in optimizers:
            if callable(getattr(optimizer, "register_step_pre_hook", None)):
                self._hooks.append(optimizer.register_step_pre_hook(self._before_step))

    def _before_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        job = self._job
        if job is not None and not job.copied.is_set():
            job.copied.wait()

    def wait_for_snapshot(self) -> None:
        """Block until the state of the save in flight (if any) is copied: from then on
        training may change it."""
        job = self._job
        if job is not None:
            job.copied.wait()

    def in_flight(self) -> bool:
        """Whether a save was started and not yet waited for."""
        return self._job is not None

    def after_write(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the save in flight is complete and named, in the writer's
        thread; at once when none is in flight or its write is already over; never when its
        write failed. An error of ``callback`` is raised by ``wait``."""
        job = self._job
        with self._lock:
            if job is not None and not job.closed:
                job.callbacks.append(callback)
                return
        if job is None:
            callback()
        elif job.error is None:
            # The write was quicker than the training thread: the callback still runs off it.
            late = threading.Thread(target=_run_late, args=(job, callback), name=_THREAD_NAME)
            job.late.append(late)
            late.start()

    def wait(self) -> None:
        """Block until the save in flight (if any) is written and its callbacks have run;
        raise its error (once)."""
        job, self._job = self._job, None
        for handle in self._hooks:
            handle.remove()
        self._hooks.clear()
        if job is None:
            return
        job.done.wait()
        for late in job.late:
            late.join()
        self._recycle(job.buffers)
        if job.error is not None:
            raise job.error

    # ------------------------------------------------------------------ the snapshot

    def _snapshot(self, value: Any, background: frozenset, copies: list, job: _Job) -> Any:
        if isinstance(value, torch.Tensor):
            tensor = value.detach()
            key = storage_key(tensor)
            if key is None or key not in background:
                return tensor.to("cpu", copy=True)
            if tensor.numel() * tensor.element_size() < _BACKGROUND_BYTES:
                return tensor.to("cpu", copy=True)
            buffer = self._buffer(tensor)
            job.buffers.append(buffer)
            copies.append((tensor, buffer))
            return buffer
        if isinstance(value, Mapping):
            items = {
                key: self._snapshot(item, background, copies, job) for key, item in value.items()
            }
            if type(value) in (OrderedDict, Counter):
                rebuilt = type(value)(items)
                if hasattr(value, "_metadata"):  # a module state dict's versions
                    rebuilt._metadata = value._metadata  # type: ignore[attr-defined]
                return rebuilt
            return items
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(self._snapshot(item, background, copies, job) for item in value)
        return value

    def _buffer(self, tensor: torch.Tensor) -> torch.Tensor:
        pinned = tensor.device.type != "cpu" and torch.accelerator.is_available()
        key = (tuple(tensor.shape), tensor.dtype, pinned)
        free = self._free.get(key)
        if free:
            return free.pop()
        return torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=pinned)

    def _recycle(self, buffers: list[torch.Tensor]) -> None:
        # Only the last save's buffers are kept: a model whose shapes change does not grow it.
        self._free = {}
        for buffer in buffers:
            key = (tuple(buffer.shape), buffer.dtype, buffer.is_pinned())
            self._free.setdefault(key, []).append(buffer)

    # ------------------------------------------------------------------ the writer's thread

    def _run(
        self,
        job: _Job,
        snapshot: dict,
        copies: list[tuple[torch.Tensor, torch.Tensor]],
        backend_args: dict | None,
    ) -> None:
        try:
            _lower_priority()
            _copy_all(copies, job.ready)
            job.copied.set()
            copies.clear()  # the sources are the live parameters: no reference kept to them
            self._write(snapshot, job.filepath, backend_args=backend_args)
            self._run_callbacks(job)
        except BaseException as error:  # raised by wait() on the training thread
            job.error = error
        finally:
            with self._lock:
                job.closed = True
            job.copied.set()
            job.done.set()

    def _run_callbacks(self, job: _Job) -> None:
        while True:
            with self._lock:
                if not job.callbacks:
                    job.closed = True
                    return
                callback = job.callbacks.pop(0)
            callback()


def _run_late(job: _Job, callback: Callable[[], None]) -> None:
    try:
        callback()
    except BaseException as error:  # raised by wait() on the training thread
        job.error = error


def _record_event(copies: list) -> Any:
    """A CUDA event on the training thread's current stream: the state the copies read is
    final once the work queued so far (the optimizer step that saved) is done. None for other
    devices, whose copies go on the default stream, after that work."""
    device = next(source.device for source, _ in copies if source.device.type != "cpu")
    if device.type != "cuda":
        return None
    event = torch.cuda.Event()
    event.record(torch.cuda.current_stream(device))
    return event


def _copy_all(copies: list[tuple[torch.Tensor, torch.Tensor]], ready: Any) -> None:
    if ready is not None:
        # Device-to-host copies into pinned memory on a stream of their own, after the step
        # that saved: the copy engine works beside the next forward and backward.
        device = next(source.device for source, _ in copies if source.device.type == "cuda")
        stream = torch.cuda.Stream(device)
        stream.wait_event(ready)
        with torch.cuda.stream(stream):
            for source, buffer in copies:
                buffer.copy_(source, non_blocking=source.device.type == "cuda")
        stream.synchronize()
        return
    for source, buffer in copies:
        if source.device.type == "cpu":
            _copy_in_pieces(source, buffer)
        else:  # ordered after the queued work on the device's default stream
            buffer.copy_(source)


def _copy_in_pieces(source: torch.Tensor, buffer: torch.Tensor) -> None:
    if not source.is_contiguous():
        buffer.copy_(source)
        return
    flat_source, flat_buffer = source.view(-1), buffer.view(-1)
    for start in range(0, flat_source.numel(), _CHUNK_ELEMENTS):
        end = start + _CHUNK_ELEMENTS
        flat_buffer[start:end].copy_(flat_source[start:end])


def _lower_priority() -> None:
    """Nice this thread (Linux: niceness is per thread), so that training's threads get the
    CPU first when both want it."""
    # One intra-op thread for the copies made here: with OpenMP the setting is this thread's
    # own, and a team of its own would spin on the cores training's team computes on.
    torch.set_num_threads(1)
    if not hasattr(os, "setpriority"):
        return
    try:
        native = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, native)
        os.setpriority(os.PRIO_PROCESS, native, min(19, current + _BACKGROUND_NICENESS))
    except OSError:  # not allowed here: the write still works, only less politely
        pass
