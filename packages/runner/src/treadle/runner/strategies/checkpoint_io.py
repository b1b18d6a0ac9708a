"""CheckpointIO: how a strategy writes and reads a whole checkpoint dict.

The Runner builds the checkpoint (model and optimizer states taken from the strategy, plus the
meta, message hub, loop position and generators) and hands it to ``strategy.checkpoint_io``;
strategies that shard their state (FSDP2, DeepSpeed) use another CheckpointIO. Every rank calls
``save`` and ``load`` (they may be collectives); ``wait`` returns once writes started with
``async_save=True`` are finished.

Asynchronous saves of whole files go through
:class:`~treadle.runner.checkpoint.async_writer.AsyncCheckpointWriter`: ``save`` returns at once;
the tensors named with ``copy_in_background`` (parameters, optimizer state) are copied to host
memory by a background thread while the next forward and backward run, and the guarded
optimizers' next ``step()`` waits for that copy; the same thread writes the file and then runs
the ``after_write`` callbacks. Only one save is in flight: a new ``save`` first waits for the
previous one. (Sharded saves copy the tensors named with ``copy_in_background`` in the
thread of a :class:`~treadle.runner.checkpoint.sharded_staging.BackgroundStager`, see
:mod:`treadle.runner.checkpoint.sharded`.)
"""

from __future__ import annotations

import inspect
import os
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch

from treadle import dist
from treadle.runner.checkpoint import _load_checkpoint, save_checkpoint
from treadle.runner.checkpoint.async_writer import AsyncCheckpointWriter, storage_keys
from treadle.runner.checkpoint.sharded import (
    PendingSave,
    load_sharded_checkpoint,
    save_sharded_checkpoint,
)
from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint
from treadle.runner.checkpoint.sharded_staging import (
    BackgroundStager,
    background_staging_supported,
    sharded_storage_keys,
)

from .fsdp_optim_keys import rekey_optimizer_state


def takes_backend_args(load: Callable[..., Any]) -> bool:
    """Whether a CheckpointIO's ``load`` takes ``backend_args`` (one written before they
    were passed to it does not).

    Example:
        >>> takes_backend_args(CheckpointIO().load)
        True
    """
    parameters = inspect.signature(load).parameters
    return "backend_args" in parameters or any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()
    )


class CheckpointIO:
    """One file per checkpoint, written by rank 0 (temporary name, then rename); reads a
    sharded checkpoint directory too, whole.

    Example:
        >>> io = CheckpointIO()
        >>> io.save({'state_dict': {}}, 'work_dirs/epoch_1.pth')  # doctest: +SKIP
        >>> io.save({'state_dict': {}}, 'work_dirs/epoch_2.pth', async_save=True)  # doctest: +SKIP
        >>> io.wait()  # doctest: +SKIP
        >>> io.load('work_dirs/epoch_1.pth')['state_dict']  # doctest: +SKIP
        {}
    """

    # Whether asynchronous saves go through the AsyncCheckpointWriter (whose host buffers
    # prepare_async_save makes ready); the subclasses that write otherwise say no.
    uses_async_writer = True

    def __init__(self) -> None:
        self._pending: Any = None
        self._writer: AsyncCheckpointWriter | None = None
        self._background: list[Any] = []
        self._guarded: list[Any] = []

    def copy_in_background(self, optimizers: Iterable[Any], tensors: Iterable[Any]) -> None:
        """For the next asynchronous save: ``tensors`` (parameters, optimizer state) change
        only in the ``step()`` of ``optimizers``; they are copied to host memory in the
        background, and that step waits for the copy."""
        self._guarded = list(optimizers)
        self._background = list(tensors)

    def save(
        self,
        checkpoint: Mapping[str, Any],
        filepath: str,
        *,
        backend_args: dict | None = None,
        async_save: bool = False,
    ) -> None:
        """Write ``checkpoint`` to ``filepath``; called on every rank, rank 0 writes. With
        ``async_save`` a thread writes a host copy of it."""
        self.wait()
        # Given for this save only (and not kept: they are the live parameters).
        background, guarded = self._background, self._guarded
        self._background, self._guarded = [], []
        if dist.get_rank() != 0:
            return
        if not async_save:
            save_checkpoint(dict(checkpoint), filepath, backend_args=backend_args)
            return
        # Without a guarded optimizer nothing waits for a background copy: all is copied now.
        keys = storage_keys(background) if guarded else frozenset()
        writer = self._async_writer()
        writer.save(checkpoint, filepath, backend_args=backend_args, background=keys)
        writer.guard(guarded)

    def prepare_async_save(
        self, optimizers: Iterable[Any], tensors: Callable[[], Iterable[Any]]
    ) -> None:
        """Make the host buffers of the first asynchronous save ready ahead of it (on the rank
        that writes): see :meth:`AsyncCheckpointWriter.prepare`; ``tensors()`` are those
        ``copy_in_background`` will be given."""
        optimizers = list(optimizers)
        if self.uses_async_writer and dist.get_rank() == 0 and optimizers:
            self._async_writer().prepare(optimizers, tensors)

    def _async_writer(self) -> AsyncCheckpointWriter:
        if self._writer is None:
            # save_checkpoint looked up at call time: tests and fault injection replace it.
            self._writer = AsyncCheckpointWriter(
                lambda *args, **kwargs: save_checkpoint(*args, **kwargs)
            )
        return self._writer

    def load(
        self,
        filepath: str,
        *,
        map_location: Any = "cpu",
        template: Mapping[str, Any] | None = None,
        backend_args: dict | None = None,
    ) -> Any:
        """The checkpoint at ``filepath``: a file, or a sharded checkpoint directory read whole
        (its optimizer state, keyed by parameter names, is re-keyed like ``template``'s).
        ``backend_args`` describe the store it is on (a file on a store, or a sharded
        checkpoint there); a local path is read as it is."""
        if not is_sharded_checkpoint(os.fspath(filepath), backend_args):  # local, or .metadata
            return _load_checkpoint(filepath, map_location=map_location, backend_args=backend_args)
        checkpoint = load_sharded_checkpoint(filepath, backend_args=backend_args)
        if template is not None and "optimizer" in checkpoint and "optimizer" in template:
            checkpoint["optimizer"] = rekey_optimizer_state(
                checkpoint["optimizer"], template["optimizer"]
            )
        return checkpoint

    def wait(self) -> None:
        """Block until the asynchronous save in flight (if any) has finished; raise its error."""
        pending, self._pending = self._pending, None
        if self._writer is not None:
            self._writer.wait()
        if pending is not None:
            pending.wait()

    def wait_for_snapshot(self) -> None:
        """Block until the state of the asynchronous save in flight is in host memory: from
        then on training may change it. The copy runs in the background for whole files, and
        for sharded saves whose step-changed tensors ``copy_in_background`` named (otherwise
        they copy it before ``save`` returns)."""
        if self._writer is not None:
            self._writer.wait_for_snapshot()

    def after_write(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the whole-file save in flight is complete (in the writer's
        thread; never if it failed: ``wait`` raises that); at once when none is in flight,
        and for sharded saves, whose directory is found complete by its marker."""
        if self._writer is not None and self._writer.in_flight():
            self._writer.after_write(callback)
        else:
            callback()


class ShardedCheckpointIO(CheckpointIO):
    """A sharded checkpoint directory written by every rank with torch.distributed.checkpoint
    (see :mod:`treadle.runner.checkpoint.sharded`); loads under any world size. On S3 or
    another treadle.fileio store, ``backend_args`` (endpoint, credentials...) are used for
    every file of it, as for a whole-file checkpoint.

    Its collectives run on a gloo group of their own, created on the first save or load (every
    rank saves and loads together), so an asynchronous save can run beside training's
    collectives, whatever their backend.

    An asynchronous save whose step-changed tensors were named with ``copy_in_background`` (the
    strategy does it) copies them to host memory in the thread of a
    :class:`~treadle.runner.checkpoint.sharded_staging.BackgroundStager` (kept from one save to
    the next, with its host storages; ``stager`` replaces it) while training goes on; the
    guarded optimizers' next ``step()`` waits for that copy. Without them the state is copied
    before ``save`` returns. :meth:`close` frees the stager's thread and host memory.

    Example:
        >>> io = ShardedCheckpointIO()
        >>> state = {'state_dict': get_model_state_dict(model)}  # doctest: +SKIP
        >>> io.copy_in_background([optimizer], list(model.parameters()))  # doctest: +SKIP
        >>> io.save(state, 'work_dirs/epoch_1.pth', async_save=True)  # doctest: +SKIP
        >>> io.load('work_dirs/epoch_1.pth', template=state)  # doctest: +SKIP
        >>> s3 = dict(endpoint_url='http://127.0.0.1:9000', aws_access_key_id='key',
        ...           aws_secret_access_key='secret')
        >>> io.save(state, 's3://bucket/run/epoch_1.pth', backend_args=s3)  # doctest: +SKIP
        >>> io.load('s3://bucket/run/epoch_1.pth', backend_args=s3)  # doctest: +SKIP
    """

    uses_async_writer = False  # torch.distributed.checkpoint's own async save

    def __init__(self, stager: BackgroundStager | None = None) -> None:
        super().__init__()
        self._group: Any = None
        self._stager = stager
        self._step_hooks: list[Any] = []

    def process_group(self) -> Any:
        if self._group is None and dist.is_distributed():
            self._group = torch.distributed.new_group(backend="gloo")
        return self._group

    def save(
        self,
        checkpoint: Mapping[str, Any],
        filepath: str,
        *,
        backend_args: dict | None = None,
        async_save: bool = False,
    ) -> None:
        self.wait()
        # Given for this save only (and not kept: they are the live parameters).
        background, guarded = self._background, self._guarded
        self._background, self._guarded = [], []
        # Without a guarded optimizer nothing waits for a background copy: all is copied now
        # (and so with a torch whose async_save cannot copy in the background).
        in_background = async_save and bool(guarded) and background_staging_supported()
        self._pending = save_sharded_checkpoint(
            checkpoint,
            filepath,
            process_group=self.process_group(),
            async_save=async_save,
            backend_args=backend_args,
            stager=self._background_stager() if in_background else None,
            background=sharded_storage_keys(background) if in_background else (),
        )
        if in_background and self._pending is not None:
            self._guard(guarded, self._pending)

    def _background_stager(self) -> BackgroundStager:
        if self._stager is None:
            self._stager = BackgroundStager()
            # Its host storages and thread go with this CheckpointIO at the latest.
            weakref.finalize(self, self._stager.close)
        return self._stager

    def _guard(self, optimizers: list[Any], pending: PendingSave) -> None:
        """Make the next ``step()`` of each of ``optimizers`` wait for the host copy."""

        def before_step(*_: Any) -> None:
            pending.wait_for_snapshot()

        for optimizer in optimizers:
            if callable(getattr(optimizer, "register_step_pre_hook", None)):
                self._step_hooks.append(optimizer.register_step_pre_hook(before_step))

    def wait(self) -> None:
        for handle in self._step_hooks:
            handle.remove()
        self._step_hooks.clear()
        super().wait()

    def wait_for_snapshot(self) -> None:
        if self._pending is not None:
            self._pending.wait_for_snapshot()

    def close(self) -> None:
        """Wait for the save in flight (raising its error), then free the background stager's
        thread and host memory (a later save makes another)."""
        try:
            self.wait()
        finally:
            stager, self._stager = self._stager, None
            if stager is not None:
                stager.close()

    def load(
        self,
        filepath: str,
        *,
        map_location: Any = "cpu",
        template: Mapping[str, Any] | None = None,
        backend_args: dict | None = None,
    ) -> Any:
        if not is_sharded_checkpoint(os.fspath(filepath), backend_args):  # local, or .metadata
            if os.path.isdir(os.fspath(filepath)):
                return load_sharded_checkpoint(filepath)  # raises: names what is missing
            return super().load(
                filepath, map_location=map_location, template=template, backend_args=backend_args
            )
        self.wait()
        return load_sharded_checkpoint(
            filepath,
            template=template,
            process_group=self.process_group(),
            backend_args=backend_args,
        )
