"""Sharded checkpoints with torch.distributed.checkpoint (DCP): every rank writes its own shards
of the model and optimizer (DTensors) to one file, rank 0 writes everything else, and the result
loads under any world size, or in one process without a process group.

Differences from calling DCP directly:

- the checkpoint appears under its name only once complete (see :mod:`.sharded_layout`), so a
  run stopped in the middle of a save leaves the previous checkpoints, never half of one;
- it goes to a local path or to any treadle.fileio store (``s3://...``, see
  :mod:`.sharded_storage`, through the backend its ``backend_args`` describe), where
  ``.metadata``, written last, marks it complete;
- values that are not sharded (meta, message hub, loop state, schedulers) are saved from rank 0
  only, so what is saved does not depend on which rank DCP's deduplication picks;
- an asynchronous save may copy the parameters and the optimizer's state to host memory in a
  thread of its own while the next forward and backward run (:mod:`.sharded_staging`), the
  optimizers' next step waiting for the copy; a copy that fails on one rank fails the save on
  every rank, never leaving the others waiting;
- nothing in the checkpoint runs code when loaded: the metadata is read by an unpickler that
  builds DCP's own records only, and saved objects load with ``torch.load(weights_only=True)``;
- loading takes a *template* (what the strategy would save now): its DTensors are filled in
  place, with the shards each rank needs; every other entry is read whole.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import os
import pickle
import shutil
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

import torch

from treadle import dist

from .errors import UnsafeCheckpointError
from .sharded_layout import (
    METADATA_FILE,
    is_sharded_checkpoint,
    replaced_path,
    temporary_path,
)
from .sharded_staging import BackgroundStager, ShardedStagingError, detach_state
from .sharded_storage import fileio_writer, is_store_path, store_backend, use_fileio
from .torch_format import load_torch

__all__ = [
    "PendingSave",
    "ShardedCheckpointMismatch",
    "ShardedStagingError",
    "load_sharded_checkpoint",
    "save_sharded_checkpoint",
]

# What DCP's metadata file may hold: its records, sizes, dtypes and plain containers.
_METADATA_MODULES = ("torch.distributed.checkpoint.",)
_METADATA_GLOBALS = {
    ("torch", "Size"),
    ("torch.serialization", "_get_layout"),
    ("collections", "OrderedDict"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "slice"),
    ("pathlib", "PosixPath"),
    ("pathlib", "WindowsPath"),
}


class _MetadataUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, path: str) -> None:
        super().__init__(file)
        self.path = path

    def find_class(self, module: str, name: str) -> Any:
        allowed = module.startswith(_METADATA_MODULES) or (module, name) in _METADATA_GLOBALS
        if module == "torch" and isinstance(
            getattr(torch, name, None), (torch.dtype, torch.layout, torch.memory_format)
        ):
            allowed = True
        if not allowed:
            raise pickle.UnpicklingError(
                f"{self.path}: the metadata of a sharded checkpoint names {module}.{name}, which "
                "is not part of torch.distributed.checkpoint's metadata; refusing to load it"
            )
        return super().find_class(module, name)


def _reader(path: str, backend_args: dict | None = None) -> Any:
    from torch.distributed.checkpoint import FileSystemReader

    class SafeReader(FileSystemReader):
        """DCP's file reader whose metadata cannot run code."""

        def read_metadata(self, *args: Any, **kwargs: Any) -> Any:
            from torch.distributed.checkpoint.metadata import StorageMeta

            metadata_path = self.fs.concat_path(self.path, METADATA_FILE)
            with self.fs.create_stream(metadata_path, "rb") as file:
                metadata = _MetadataUnpickler(file, path).load()
            if getattr(metadata, "storage_meta", None) is None:
                metadata.storage_meta = StorageMeta()
            metadata.storage_meta.load_id = self.load_id
            return metadata

    if not is_store_path(path):
        return SafeReader(path)
    return use_fileio(SafeReader(path), path, backend_args)


def _safe_bytes(path: str, fqn: str, value: io.BytesIO) -> Any:
    return load_torch(value, map_location="cpu", weights_only=True, filename=f"{path} [{fqn}]")


def _planners(path: str) -> tuple[type, type]:
    from torch.distributed.checkpoint._nested_dict import set_element
    from torch.distributed.checkpoint.default_planner import (
        DefaultLoadPlanner,
        _EmptyStateDictLoadPlanner,
    )

    def load_bytes(self: Any, read_item: Any, value: io.BytesIO) -> None:
        fqn = read_item.dest_index.fqn
        obj = _safe_bytes(path, fqn, value)
        if self.flatten_state_dict:
            set_element(self.original_state_dict, self.mappings[fqn], obj)
        else:
            self.state_dict[fqn] = obj

    in_place = type("SafeLoadPlanner", (DefaultLoadPlanner,), {"load_bytes": load_bytes})
    whole = type("SafeWholeLoadPlanner", (_EmptyStateDictLoadPlanner,), {"load_bytes": load_bytes})
    return in_place, whole


def _is_dtensor(value: Any) -> bool:
    from torch.distributed.tensor import DTensor

    return isinstance(value, DTensor)


def _sharded_only(value: Any) -> Any:
    """The DTensors of a nested dict (other ranks' part of the checkpoint), or None."""
    if _is_dtensor(value):
        return value
    if isinstance(value, Mapping):
        kept = {key: _sharded_only(item) for key, item in value.items()}
        kept = {key: item for key, item in kept.items() if item is not None}
        return kept or None
    if isinstance(value, (list, tuple)) and any(_sharded_only(item) is not None for item in value):
        return value
    return None


# DCP flattens nested dicts into string keys and drops empty ones: a dict {1: 2} would come
# back as {'1': 2}, an empty optimizer state not at all. Every part of the checkpoint that holds
# no DTensor is therefore stored whole, as the bytes of torch.save, under this key.
PACKED = "__treadle_packed__"


def _has_dtensor(value: Any) -> bool:
    if _is_dtensor(value):
        return True
    if isinstance(value, Mapping):
        return any(_has_dtensor(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_dtensor(item) for item in value)
    return False


def _pack(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and not _is_dtensor(value):
        return value  # DCP stores tensors as they are
    if not _has_dtensor(value):
        buffer = io.BytesIO()
        torch.save(value, buffer)
        return {PACKED: buffer.getvalue()}
    if isinstance(value, Mapping):
        return {key: _pack(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_pack(item) for item in value]
    return value


def _unpack(value: Any, path: str, where: str = "") -> Any:
    if isinstance(value, Mapping):
        if set(value) == {PACKED}:
            return _safe_bytes(path, where, io.BytesIO(value[PACKED]))
        return {
            key: _unpack(item, path, f"{where}.{key}" if where else key)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_unpack(item, path, f"{where}.{i}") for i, item in enumerate(value)]
    return value


def _clear_store_path(path: str, backend: Any) -> None:
    """Remove an older checkpoint of the same name from a store (rank 0), its .metadata
    first: nothing is renamed there, so a replacement written half-way must not look
    complete."""
    marker = backend.join_path(path, METADATA_FILE)
    if backend.isfile(marker):
        backend.remove(marker)
    if backend.isdir(path):
        backend.rmtree(path)


def _publish(temporary: str, path: str) -> None:
    """Give the complete checkpoint at ``temporary`` its name (rank 0)."""
    if os.path.exists(path):
        old = replaced_path(path)
        shutil.rmtree(old, ignore_errors=True)
        os.rename(path, old)
        os.rename(temporary, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(temporary, path)


class PendingSave:
    """A save that runs in the background: :meth:`wait` returns once it is complete and named
    (and raises what went wrong); :meth:`wait_for_snapshot` once its state is in host memory."""

    def __init__(
        self,
        future: concurrent.futures.Future,
        finish: Callable[[], None] | None,
        staged: concurrent.futures.Future | None = None,
    ):
        self.future = future
        self._finished = threading.Event()
        self._error: BaseException | None = None
        self._finish = finish
        self._staged = staged
        future.add_done_callback(self._done)

    def _done(self, future: concurrent.futures.Future) -> None:
        try:
            if future.exception() is None and self._finish is not None:
                self._finish()
        except BaseException as error:  # reported by wait() on the training thread
            self._error = error
        finally:
            self._finished.set()

    def done(self) -> bool:
        return self._finished.is_set()

    def wait_for_snapshot(self) -> None:
        """Block until the state is copied to host memory (at once when it was copied before
        the save returned): from then on training may change it. Errors are ``wait``'s."""
        if self._staged is not None:
            concurrent.futures.wait([self._staged])

    def wait(self) -> None:
        with _staging_errors():
            self.future.result()
        self._finished.wait()
        if self._error is not None:
            raise self._error


@contextlib.contextmanager
def _staging_errors() -> Iterator[None]:
    """A failed background copy (on any rank) fails DCP's save on every rank: each raises the
    copy's own error, which names the checkpoint and the rank, not DCP's wrapper."""
    from torch.distributed.checkpoint import CheckpointException

    try:
        yield
    except CheckpointException as error:
        for failure in error.failures.values():
            cause = failure[0] if isinstance(failure, tuple) else failure
            if isinstance(cause, ShardedStagingError):
                raise ShardedStagingError(str(cause)) from error
        raise


def save_sharded_checkpoint(
    checkpoint: Mapping[str, Any],
    path: str | os.PathLike,
    *,
    process_group: Any = None,
    async_save: bool = False,
    backend_args: dict | None = None,
    stager: BackgroundStager | None = None,
    background: Collection[int] = (),
) -> PendingSave | None:
    """Write ``checkpoint`` (nested dicts whose model and optimizer states hold DTensors) as the
    sharded checkpoint directory ``path`` (a local folder, or an ``s3://`` or other
    treadle.fileio URL); every rank calls it.

    With ``async_save`` the files are written by a background thread: the returned
    :class:`PendingSave` says when it is done. Without a ``stager`` the state is copied to
    host memory before it returns. With a :class:`BackgroundStager` only the dicts and lists
    are rebuilt and the tensors cloned that are not in ``background`` (the storage keys, see
    :func:`.sharded_staging.sharded_storage_keys`, of tensors that only an optimizer step
    changes: parameters and optimizer state, DTensors included); those are copied by the
    stager's thread while training goes on, and the caller makes the optimizers' next
    ``step()`` wait for ``PendingSave.wait_for_snapshot()``. A failed copy is raised by
    ``wait()`` on every rank (:class:`ShardedStagingError`, naming ``path``).
    ``process_group`` carries the checkpoint's collectives (a gloo group of its own lets them
    run beside training's). ``backend_args`` (as given to CheckpointHook: endpoint,
    credentials...) describe the store of a URL ``path``; a local path does not use them.

    Example:
        >>> save_sharded_checkpoint({'state_dict': get_model_state_dict(model)},
        ...                         'work_dirs/fsdp/epoch_1.pth')  # doctest: +SKIP
    """
    import torch.distributed.checkpoint as dcp

    path = os.fspath(path)
    store = is_store_path(path)
    # Checked on every rank before any collective: each would fail alike inside DCP.
    backend = store_backend(path, backend_args) if store else None
    # On a store the ranks write under the final name (.metadata last); locally, beside it.
    temporary = path if store else temporary_path(path)
    distributed = dist.is_distributed()
    rank = dist.get_rank()
    if rank == 0 and store:
        _clear_store_path(path, backend)
    elif rank == 0:
        shutil.rmtree(temporary, ignore_errors=True)  # left by a run that stopped mid-save
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if distributed:
        torch.distributed.barrier(group=process_group)
    state = _pack(dict(checkpoint) if rank == 0 else (_sharded_only(checkpoint) or {}))
    writer = fileio_writer(path, backend_args) if store else dcp.FileSystemWriter(temporary)
    publish = (lambda: _publish(temporary, path)) if rank == 0 and not store else None
    if async_save and stager is not None:
        detached, pending = detach_state(state, background)
        response = dcp.async_save(
            stager.wrap(detached, pending, path),
            storage_writer=writer,
            process_group=process_group,
            no_dist=not distributed,
            async_stager=stager,
            planner=stager.planner(),
        )
        return PendingSave(response.upload_completion, publish, response.staging_completion)
    if async_save:
        future = dcp.async_save(
            state, storage_writer=writer, process_group=process_group, no_dist=not distributed
        )
        if not isinstance(future, concurrent.futures.Future):  # AsyncSaveResponse
            future = future.upload_completion
        return PendingSave(future, publish)
    dcp.save(state, storage_writer=writer, process_group=process_group, no_dist=not distributed)
    if publish is not None:
        publish()
    if distributed:
        torch.distributed.barrier(group=process_group)
    return None


class ShardedCheckpointMismatch(ValueError):
    """The template (the model and optimizer now) and a sharded checkpoint disagree."""


def _flatten(template: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    from torch.distributed.checkpoint._nested_dict import flatten_state_dict

    return flatten_state_dict(dict(template))


def _check_shapes(path: str, flat: Mapping[str, Any], saved: Mapping[str, Any]) -> None:
    from torch.distributed.checkpoint.metadata import TensorStorageMetadata

    wrong = []
    for key, value in flat.items():
        stored = saved.get(key)
        if isinstance(stored, TensorStorageMetadata) and tuple(stored.size) != tuple(value.shape):
            wrong.append(f"{key} (checkpoint {list(stored.size)}, now {list(value.shape)})")
    if wrong:
        raise ShardedCheckpointMismatch(
            f"the sharded checkpoint {path} does not fit the model: these entries have other "
            f"shapes: {', '.join(wrong)}"
        )


def missing_from_checkpoint(
    path: str | os.PathLike,
    template: Mapping[str, Any],
    prefix: str,
    backend_args: dict | None = None,
) -> list[str]:
    """The names under ``template[prefix]`` (a state dict) that the checkpoint lacks."""
    saved = _reader(os.fspath(path), backend_args).read_metadata().state_dict_metadata
    flat, _ = _flatten({prefix: template.get(prefix, {})})
    return sorted(key[len(prefix) + 1 :] for key in flat if key not in saved)


def load_sharded_checkpoint(
    path: str | os.PathLike,
    *,
    template: Mapping[str, Any] | None = None,
    process_group: Any = None,
    backend_args: dict | None = None,
) -> dict[str, Any]:
    """The sharded checkpoint at ``path`` as a nested dict; every rank of a group calls it.
    ``backend_args`` describe the store of a URL ``path``, as for
    :func:`save_sharded_checkpoint`.

    Entries of ``template`` that are DTensors are loaded in place (each rank reads the shards
    it holds, whatever the world size that saved them); everything else is read whole. An entry
    whose shape differs from the checkpoint's is an error that names it; entries of the
    template that the checkpoint lacks are left out of the result (the strategy's
    ``load_model_state_dict`` reports them as missing keys).

    Example:
        >>> load_sharded_checkpoint('work_dirs/fsdp/epoch_1.pth')['meta']['epoch']  # doctest: +SKIP
        1
    """
    from torch.distributed.checkpoint._nested_dict import set_element
    from torch.distributed.checkpoint.state_dict_loader import _load_state_dict

    path = os.fspath(path)
    if not is_sharded_checkpoint(path, backend_args):
        if is_store_path(path):
            raise FileNotFoundError(
                f"no complete sharded checkpoint at {path}: it has no {METADATA_FILE} (the file "
                "torch.distributed.checkpoint writes last)"
            )
        if os.path.isdir(path):
            raise FileNotFoundError(
                f"{path} is not a complete sharded checkpoint: it has no {METADATA_FILE} (the "
                "file torch.distributed.checkpoint writes last)"
            )
        raise FileNotFoundError(f"no sharded checkpoint at {path}")
    no_dist = not dist.is_distributed()
    saved = _reader(path, backend_args).read_metadata().state_dict_metadata
    flat, mappings = _flatten(template or {})
    in_place = {key: value for key, value in flat.items() if _is_dtensor(value) and key in saved}
    _check_shapes(path, in_place, saved)
    in_place_planner, whole_planner = _planners(path)
    result: dict[str, Any] = {}
    rest = {key for key in saved if key not in in_place}
    with _own_errors():
        if rest:
            keys = None if not in_place else rest
            _load_state_dict(
                result,
                _reader(path, backend_args),
                process_group,
                no_dist=no_dist,
                planner=whole_planner(keys=keys),
            )
        if in_place:
            _load_state_dict(
                in_place,
                _reader(path, backend_args),
                process_group,
                no_dist=no_dist,
                planner=in_place_planner(),
            )
    result = _unpack(result, path)
    for key, value in in_place.items():
        set_element(result, mappings[key], value)
    return result


@contextlib.contextmanager
def _own_errors() -> Iterator[None]:
    """DCP wraps what a rank raised in a CheckpointException (with every rank's traceback);
    our refusals to load unsafe objects are raised as they are."""
    from torch.distributed.checkpoint import CheckpointException

    try:
        yield
    except CheckpointException as error:
        for failure in error.failures.values():
            cause = failure[0] if isinstance(failure, tuple) else failure
            if isinstance(cause, (UnsafeCheckpointError, pickle.UnpicklingError)):
                raise cause from None
        raise
