"""Background staging of asynchronous sharded saves: the copy to host memory happens while the
next forward and backward run, not on the step that saved.

torch.distributed.checkpoint's ``async_save`` copies ("stages") the whole state to host memory
before it returns, unless given a stager that copies in the background. The tensors that only an
optimizer step changes (the parameters and the optimizer's state, DTensors under FSDP2) may be
copied after ``save`` returns, as long as the optimizers' next ``step()`` waits for the copy:
:func:`detach_state` keeps those for :class:`BackgroundStager` and clones every other tensor on
the training thread (buffers the forward pass updates, small states), so that what is saved is
the state of the step that saved. The staging thread copies into host storages that it keeps
from one save to the next (pinned when the state lives on a GPU), so their pages are not faulted
in again at each save.

A failed copy must not leave the other ranks waiting in DCP's collectives for a rank that never
comes: the stager hands DCP an empty state instead, and the planner of :meth:`planner` raises
the error inside DCP's first collective step, which reports it to every rank
(:class:`ShardedStagingError`, naming the checkpoint).
"""

from __future__ import annotations

import concurrent.futures
import functools
import inspect
import threading
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import torch

from treadle import dist

__all__ = [
    "BackgroundStager",
    "ShardedStagingError",
    "background_staging_supported",
    "detach_state",
    "sharded_storage_key",
    "sharded_storage_keys",
]

# Tensors smaller than this are cloned on the training thread even when only an optimizer step
# changes them: the clone costs less than the bookkeeping (the optimizers' ``step`` counters).
_BACKGROUND_BYTES = 1 << 20
THREAD_NAME = "treadle-sharded-staging"


@functools.cache
def background_staging_supported() -> bool:
    """Whether this torch's ``dcp.async_save`` takes a stager that copies in the background
    (and answers with an ``AsyncSaveResponse``); older ones copy before ``save`` returns.

    Example:
        >>> background_staging_supported()  # torch 2.13  # doctest: +SKIP
        True
    """
    try:
        from torch.distributed.checkpoint import state_dict_saver
        from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions  # noqa: F401
    except ImportError:
        return False
    parameters = inspect.signature(state_dict_saver.async_save).parameters
    return "async_stager" in parameters and hasattr(state_dict_saver, "AsyncSaveResponse")


class ShardedStagingError(RuntimeError):
    """Copying the state of an asynchronous sharded save to host memory failed (on any rank);
    raised by ``wait()`` on every rank."""


def _local(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor holding a DTensor's shard on this rank (the tensor itself otherwise)."""
    local = getattr(tensor, "_local_tensor", None)
    return local if isinstance(local, torch.Tensor) else tensor


def sharded_storage_key(tensor: torch.Tensor) -> int | None:
    """What identifies the memory ``tensor`` lives in, for a DTensor that of its local shard
    (the state dict's DTensors share it with the live parameters); None for a tensor without
    storage of its own.

    Example:
        >>> weight = torch.ones(4)
        >>> sharded_storage_key(weight[:2]) == sharded_storage_key(weight)
        True
    """
    local = _local(tensor)
    if local.layout != torch.strided:
        return None
    try:
        key = local.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None
    return key or None  # no memory at all (an empty tensor): nothing to share


def sharded_storage_keys(tensors: Iterable[torch.Tensor]) -> frozenset[int]:
    """The :func:`sharded_storage_key` of each of ``tensors`` that has one."""
    keys = (sharded_storage_key(tensor) for tensor in tensors)
    return frozenset(key for key in keys if key is not None)


class _Slot:
    """Where a tensor copied by the staging thread goes back into the state."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def detach_state(state: Any, background: Collection[int]) -> tuple[Any, list[torch.Tensor]]:
    """On the training thread: ``state`` with its dicts and lists rebuilt (the optimizer's share
    theirs with the live optimizer) and every tensor that is not in ``background`` (storage
    keys of tensors that only an optimizer step changes) or is small cloned; the tensors the
    staging thread is to copy are replaced by slots, returned in order beside it."""
    pending: list[torch.Tensor] = []

    def later(tensor: torch.Tensor) -> _Slot:
        pending.append(tensor)
        return _Slot(len(pending) - 1)

    def walk(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            tensor = value.detach()
            local = _local(tensor)
            large = local.numel() * local.element_size() >= _BACKGROUND_BYTES
            if large and sharded_storage_key(tensor) in background:
                return later(tensor)
            copy = tensor.clone()
            # A clone in host memory is the save's own; one on a device still goes to host.
            return copy if _local(copy).device.type == "cpu" else later(copy)
        if isinstance(value, Mapping):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return _rebuilt(value, [walk(item) for item in value])
        return value

    return walk(state), pending


def _rebuilt(sequence: list | tuple, items: list) -> list | tuple:
    if hasattr(sequence, "_fields"):  # a named tuple takes its fields one by one
        return type(sequence)(*items)
    return type(sequence)(items)


def _fill(value: Any, staged: list[torch.Tensor]) -> Any:
    if isinstance(value, _Slot):
        return staged[value.index]
    if isinstance(value, dict):
        return {key: _fill(item, staged) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return _rebuilt(value, [_fill(item, staged) for item in value])
    return value


class BackgroundStager:
    """Copies the state of asynchronous sharded saves to host memory in a thread of its own,
    one save at a time, into host storages kept from one save to the next (pinned where the
    state is on a GPU). Give it to ``dcp.async_save`` as ``async_stager`` with
    :meth:`planner` as ``planner``; :meth:`close` it after the last save.

    :meth:`copy_to_host` does the copy in the staging thread; a subclass may wrap it (to watch
    or slow the copy in tests).

    Example:
        >>> stager = BackgroundStager()
        >>> state, pending = detach_state(checkpoint, background=keys)  # doctest: +SKIP
        >>> response = dcp.async_save(stager.wrap(state, pending, 'ckpt/iter_10'),
        ...                           async_stager=stager, planner=stager.planner(),
        ...                           storage_writer=writer)  # doctest: +SKIP
        >>> response.staging_completion.result()  # training may change the state  # doctest: +SKIP
        >>> stager.close()  # doctest: +SKIP
    """

    # DCP's AsyncStager protocol: stage() returns a future; nothing is synchronized after it.
    should_synchronize_after_execute = False

    def __init__(self) -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=THREAD_NAME
        )
        self._copier: Any = None  # DCP's DefaultStager, made at the first copy
        self._error: ShardedStagingError | None = None
        self._lock = threading.Lock()

    def wrap(self, state: Any, pending: list[torch.Tensor], path: str) -> dict[str, Any]:
        """What to give ``dcp.async_save`` as the state of the save of ``path``: ``state`` and
        ``pending`` from :func:`detach_state`."""
        return {_STAGED: (state, pending, path)}

    def stage(self, state_dict: dict[str, Any]) -> concurrent.futures.Future:
        """Start copying (called by ``dcp.async_save`` on the training thread): a future of the
        state in host memory (empty if the copy failed; the save then fails on every rank)."""
        state, pending, path = state_dict[_STAGED]
        with self._lock:
            self._error = None
        return self._executor.submit(self._stage, state, pending, path, _ready_event(pending))

    def copy_to_host(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        """Host copies of ``tensors`` (DTensors stay DTensors), made in the staging thread."""
        if not tensors:
            return []
        if self._copier is None:
            from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions

            pin = any(_local(tensor).device.type == "cuda" for tensor in tensors)
            # Synchronous copies inside this thread (on a stream of its own, see _stage): DCP's
            # own asynchronous staging would not wait for the step that produced the state.
            self._copier = DefaultStager(
                StagingOptions(
                    use_pinned_memory=pin,
                    use_shared_memory=False,
                    use_async_staging=False,
                    use_non_blocking_copy=False,
                )
            )
        return self._copier.stage(list(tensors))

    def planner(self) -> Any:
        """A DCP save planner that raises the copy's error in DCP's first collective step, so
        that every rank fails the save together instead of waiting for this one."""
        from torch.distributed.checkpoint import DefaultSavePlanner

        stager = self

        class StagedSavePlanner(DefaultSavePlanner):
            def set_up_planner(
                self, state_dict: Any, storage_meta: Any = None, is_coordinator: bool = False
            ) -> None:
                with stager._lock:
                    error = stager._error
                if error is not None:
                    raise error
                super().set_up_planner(state_dict, storage_meta, is_coordinator)

        return StagedSavePlanner()

    def close(self) -> None:
        """Wait for a copy in flight, stop the thread and free the host storages."""
        self._executor.shutdown(wait=True)
        if self._copier is not None:
            self._copier.close()
            self._copier = None

    def _stage(self, state: Any, pending: list, path: str, ready: Any) -> dict[str, Any]:
        try:
            # One intra-op thread: a team of its own would spin on the cores training uses.
            torch.set_num_threads(1)
            if ready is None:
                staged = self.copy_to_host(pending)
            else:
                # The copies read the state once the step that saved is done on the device,
                # on a stream of their own: beside the next forward and backward.
                stream = torch.cuda.Stream(ready.device)
                stream.wait_event(ready.event)
                with torch.cuda.stream(stream):
                    staged = self.copy_to_host(pending)
                stream.synchronize()
            pending.clear()  # the live parameters: no reference kept to them
            return _fill(state, staged)
        except BaseException as error:  # raised by every rank's wait(), see planner()
            with self._lock:
                self._error = ShardedStagingError(
                    f"the asynchronous save of {path} failed while copying the state to host "
                    f"memory on rank {dist.get_rank()}: {type(error).__name__}: {error}"
                )
            pending.clear()
            return {}


# The key under which BackgroundStager.wrap hands its parts through dcp.async_save.
_STAGED = "__treadle_staged__"


class _Ready:
    def __init__(self, event: Any, device: torch.device) -> None:
        self.event = event
        self.device = device


def _ready_event(pending: list[torch.Tensor]) -> _Ready | None:
    """A CUDA event on the training thread's current stream: the state is final once the work
    queued so far (the optimizer step that saved) is done. None when nothing is on a GPU."""
    for tensor in pending:
        device = _local(tensor).device
        if device.type == "cuda":
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream(device))
            return _Ready(event, device)
    return None
