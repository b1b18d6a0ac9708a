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

The copy runs at the training thread's priority: the guarded step waits for it, so starving it
only moves the wait there. The write, which nothing waits for until the next save, is spread
over the training steps (:mod:`.write_pacing`): each guarded optimizer step lets a share of it
go, sized so that the write ends about halfway to the next save (the steps between the last
two saves tell how far that is).

The host buffers of the first save can be made ready ahead of it (``prepare``): after the
optimizers' first step (which creates their state) a thread at the lowest priority allocates
them and faults their pages in, which the first copy would otherwise do on the way to the
next optimizer step.
"""

from __future__ import annotations

import math
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import torch

from .host_buffers import HostBuffers, buffer_key
from .io import save_checkpoint
from .write_pacing import WritePace, pacing

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
# The thread that makes the first save's buffers ready runs at the lowest priority there is.
_PREPARE_NICENESS = 19
# Before two saves have shown how many steps lie between them: the first write is spread over
# this many steps, and a step is taken to last this long.
_FIRST_SPREAD = 4
_FIRST_STEP_SECONDS = 1.0


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
        self.nbytes = 0  # what the snapshot's tensors hold: about the file's size
        self.pace: WritePace | None = None  # set by guard(): the write goes as steps allow


class AsyncCheckpointWriter:
    """Writes checkpoint dicts in a background thread, one save at a time.

    Example:
        >>> writer = AsyncCheckpointWriter()
        >>> writer.prepare([optimizer], lambda: list(model.parameters()))  # doctest: +SKIP
        >>> params = [p.detach() for p in model.parameters()]  # doctest: +SKIP
        >>> writer.save(checkpoint, 'work_dirs/iter_100.pth',
        ...             background=storage_keys(params))  # doctest: +SKIP
        >>> writer.guard([optimizer])  # its next step waits for the copy; its steps pace
        ...                            # the write  # doctest: +SKIP
        >>> writer.after_write(lambda: print('complete'))  # doctest: +SKIP
        >>> writer.wait()  # the file is complete, or its error is raised  # doctest: +SKIP
    """

    def __init__(self, write: Callable[..., None] = save_checkpoint) -> None:
        self._write = write
        self._job: _Job | None = None
        self._lock = threading.Lock()
        self._buffers = HostBuffers()
        self._prepare_hooks: list[Any] = []
        self._hooks: list[Any] = []
        self._steps = 0  # guarded optimizer steps since the last save
        self._steps_between_saves: int | None = None
        self._step_seconds = _FIRST_STEP_SECONDS

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
        self._buffers.stop_prefaulting()
        for handle in self._prepare_hooks:
            handle.remove()
        self._prepare_hooks.clear()
        self.wait()
        if self._steps:
            self._steps_between_saves, self._steps = self._steps, 0
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
        the background copy of the save in flight is complete; their steps from then on pace
        its write."""
        for optimizer in optimizers:
            if callable(getattr(optimizer, "register_step_pre_hook", None)):
                self._hooks.append(optimizer.register_step_pre_hook(self._before_step))
        job = self._job
        if self._hooks and job is not None:
            between = self._steps_between_saves
            spread = max(1, between // 2) if between else _FIRST_SPREAD
            job.pace = WritePace(math.ceil(job.nbytes / spread), self._step_seconds)

    def _before_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        job = self._job
        if job is None:
            return
        if not job.copied.is_set():
            job.copied.wait()
        self._steps += 1
        if job.pace is not None:
            job.pace.tick()

    def prepare(
        self, optimizers: Iterable[Any], tensors: Callable[[], Iterable[torch.Tensor]]
    ) -> None:
        """Make the host buffers of the first save ready ahead of it: after the first
        ``step()`` of ``optimizers`` (at once without one), ``tensors()`` (those the first
        save will copy in the background) tells their shapes, and a thread at the lowest
        priority allocates the buffers and faults their pages in. The first save takes what
        is ready by then."""
        started = threading.Event()

        def start(*_: Any) -> None:
            # (A hook cannot remove itself while torch calls the hooks: the first save does.)
            if started.is_set() or self._buffers.prefaulting_stopped():
                return
            started.set()
            keys = [
                buffer_key(tensor)
                for tensor in tensors()
                if storage_key(tensor) is not None and _copied_later(tensor)
            ]
            threading.Thread(
                target=_prefault,
                args=(self._buffers, keys),
                name=f"{_THREAD_NAME}-prepare",
                daemon=True,
            ).start()

        for optimizer in optimizers:
            if callable(getattr(optimizer, "register_step_post_hook", None)):
                self._prepare_hooks.append(optimizer.register_step_post_hook(start))
        if not self._prepare_hooks:
            start()

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
        if job.pace is not None:
            job.pace.release()  # nothing is gained by spreading what is waited for
            self._step_seconds = job.pace.step_seconds
        job.done.wait()
        for late in job.late:
            late.join()
        self._buffers.keep(job.buffers)
        if job.error is not None:
            raise job.error

    # ------------------------------------------------------------------ the snapshot

    def _snapshot(self, value: Any, background: frozenset, copies: list, job: _Job) -> Any:
        if isinstance(value, torch.Tensor):
            tensor = value.detach()
            key = storage_key(tensor)
            job.nbytes += tensor.numel() * tensor.element_size()
            if key is None or key not in background:
                return tensor.to("cpu", copy=True)
            if not _copied_later(tensor):
                return tensor.to("cpu", copy=True)
            buffer = self._buffers.take(tensor)
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

    # ------------------------------------------------------------------ the writer's thread

    def _run(
        self,
        job: _Job,
        snapshot: dict,
        copies: list[tuple[torch.Tensor, torch.Tensor]],
        backend_args: dict | None,
    ) -> None:
        try:
            # One intra-op thread for the copies made here: with OpenMP the setting is this
            # thread's own, and a team of its own would spin on the cores training's team
            # computes on.
            torch.set_num_threads(1)
            _copy_all(copies, job.ready)
            job.copied.set()
            copies.clear()  # the sources are the live parameters: no reference kept to them
            _lower_priority(_BACKGROUND_NICENESS)
            with pacing(job.pace):
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


def _copied_later(tensor: torch.Tensor) -> bool:
    """Whether a tensor the caller allows in the background is worth copying there."""
    return tensor.numel() * tensor.element_size() >= _BACKGROUND_BYTES


def _prefault(buffers: HostBuffers, keys: list[tuple]) -> None:
    torch.set_num_threads(1)  # as the writer's copies (see _run)
    _lower_priority(_PREPARE_NICENESS)
    buffers.prefault(keys)


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


def _lower_priority(niceness: int) -> None:
    """Nice this thread (Linux: niceness is per thread), so that training's threads get the
    CPU first when both want it."""
    if not hasattr(os, "setpriority"):
        return
    try:
        native = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, native)
        os.setpriority(os.PRIO_PROCESS, native, min(19, current + niceness))
    except OSError:  # not allowed here: the write still works, only less politely
        pass
