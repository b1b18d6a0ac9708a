"""The device input path: each train batch copied to the device ahead of its step, on a side
stream, while the hooks and the step keep the batch the DataLoader gave.

On an accelerator, a batch the data preprocessor copies inside ``train_step`` is copied on the
stream the model computes on, behind every kernel already queued there, and a blocking copy
(the preprocessor's default) also makes the host wait for all of them: the device idles while
the host prepares the next step. Here the train loop copies the tensors of each batch on a side
stream with ``non_blocking=True`` (treadle.runner.device.streams) as soon as it takes the batch
from the DataLoader, and where that is safe it takes the *next* batch from the DataLoader at
once and starts its copy too, so that it runs while the current step computes: two batches in
flight at most, the one being trained and the one being copied.

What MMEngine shows stays as it was:

- hooks (``before_train_iter``, ``after_train_iter``) and ``model.train_step`` receive the
  batch the DataLoader collated, on the host; the data preprocessor, where it moves a host
  tensor, takes the copy made for it instead (treadle.runner.model.preprocessors.prefetched),
  unless a hook replaced the tensor or changed it in place (then it moves that one, as before);
- the saved position counts the batches trained, never one read ahead: the loop counts the
  batches it is handed, the DataLoader workers' random streams (worker_streams.py) count them
  too, and a batch read ahead is not handed until the step before it is done;
- the same batches in the same order: reading ahead is done only where it draws nothing from
  the main process's generators, that is with DataLoader workers (without them the dataset's
  transforms run in the main process, and reading ahead would move their random draws before
  the current step's). Without workers, the copy of each batch starts when the loop takes it.

``train_cfg.device_prefetch`` (default None) turns it on where the model's device has side
streams (CUDA, XPU, a vendor's accelerator), off on the CPU; False turns it off; True asks for
it everywhere, the CPU included (nothing is copied there: the path runs, for tests).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from treadle.logging import print_log
from treadle.runner.device import get_device
from treadle.runner.device.streams import SideStream, side_stream_for
from treadle.runner.model import BaseDataPreprocessor, unwrap_model
from treadle.runner.model.preprocessors.prefetched import PrefetchedCopies

from .data_position import _plain_batch_size, stateful_sampler

# How many batches in a row whose copies the data preprocessor did not take (a model whose
# train_step moves the batch itself), or that had nothing to copy (already on the device),
# before the loop stops copying.
UNUSED_LIMIT = 3
SETTING_KEY = "train_cfg.device_prefetch"


def check_setting(value: Any) -> bool | None:
    """``value`` of ``train_cfg.device_prefetch`` (None: on where the device has side streams;
    True; False), or a TypeError naming the key.

    Example:
        >>> check_setting(None) is None, check_setting(False)
        (True, False)
    """
    if value is None or isinstance(value, bool):
        return value
    raise TypeError(
        f"{SETTING_KEY} must be True, False or None (None: on where the device has side "
        f"streams), got {type(value).__name__}: {value!r}"
    )


def pin_memory_default(dataloader: Any, setting: bool | None) -> Any:
    """A train dataloader config that names no ``pin_memory`` gets ``pin_memory=True`` when this
    process computes on an accelerator and ``device_prefetch`` is not False: copies from pinned
    memory leave the host free. Anything else (a built DataLoader, an explicit value, the CPU)
    is returned as it is.

    Example:
        >>> pin_memory_default(dict(batch_size=2), False)
        {'batch_size': 2}
    """
    if setting is False or not isinstance(dataloader, Mapping) or "pin_memory" in dataloader:
        return dataloader
    if get_device() in ("cpu", "mps"):
        return dataloader
    return {**dataloader, "pin_memory": True}


class CpuStream(SideStream):
    """The side stream of ``device_prefetch=True`` on the CPU: torch's CPU streams, which run
    everything in order, and moves that copy nothing (a CPU tensor is already there)."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._module = torch.cpu
        self.stream = torch.cpu.Stream()

    def current(self) -> Any:
        return torch.cpu.current_stream()

    def hand_over(self, copies: Any, ready: Any) -> None:
        # The CPU runs in order: nothing to wait for, and no allocator to tell.
        return None


def tensors_to_copy(batch: Any, device: torch.device) -> list[torch.Tensor]:
    """The tensors of ``batch`` not on ``device``, found where the data preprocessor moves
    them: in dicts, lists and tuples (each tensor once). Data elements are left to the
    preprocessor (their fields are small: labels, boxes).

    Example:
        >>> images = torch.zeros(2, 3)
        >>> batch = {'inputs': [images], 'data_samples': None}
        >>> tensors_to_copy(batch, torch.device('meta'))[0] is images
        True
    """
    found: dict[int, torch.Tensor] = {}
    stack = [batch]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            if item.device != device:
                found.setdefault(id(item), item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return list(found.values())


class DevicePrefetcher:
    """The batches of ``source`` as they are, each one's tensors copied to the device on
    ``side`` before the loop takes it, the copies put in ``table`` for the data preprocessor.

    With ``read_ahead``, the next batch is taken from ``source`` (and its copy started) when
    the loop takes one: its copy runs while the current step computes. The end of ``source``
    or an error in it comes when the loop asks for the batch it would have been. ``counts``
    (the loop's WorkerStreams, which count the batches taken from ``source``) is told that the
    batch read ahead is not taken yet.

    Example:
        >>> batches = DevicePrefetcher(iter(loader), side, table, read_ahead=True)
        ... # doctest: +SKIP
        >>> data_batch = next(batches)  # the loader's own batch; its copies are in table
        ... # doctest: +SKIP
    """

    def __init__(
        self,
        source: Iterator[Any],
        side: SideStream,
        table: PrefetchedCopies,
        read_ahead: bool,
        counts: Any = None,
        copying: _Copying | None = None,
    ) -> None:
        self._source = source
        self._side = side
        self._device = side.device
        self._table = table
        self._read_ahead = read_ahead
        self._counts = counts
        # Shared by the iterators of one run: whether copies are still made.
        self._copying = copying if copying is not None else _Copying()
        # (batch, [(host, copy)], ready event) read ahead, and the end or error that came
        # instead of the next batch.
        self._held: tuple[Any, list, Any] | None = None
        self._ended: BaseException | None = None
        # Copies stopped and nothing held: batches pass as they come.
        self._plain = False

    def __iter__(self) -> DevicePrefetcher:
        return self

    def __next__(self) -> Any:
        if self._plain:
            return next(self._source)
        held = self._held
        if held is not None:
            self._held = None
            if self._counts is not None:
                self._counts.consumed += 1
        elif self._ended is not None:
            self._table.clear()
            raise self._ended
        elif not self._copying.on:
            # The step of the last batch with copies is done: drop them, and pass batches on.
            self._table.clear()
            self._plain = True
            return next(self._source)
        else:
            try:
                held = self._fetch()
            except StopIteration:
                self._table.clear()
                raise
        if self._read_ahead and self._copying.on:
            self._read_next()
        batch, pairs, ready = held
        self._hand_over(pairs, ready)
        return batch

    def _fetch(self) -> tuple[Any, list, Any]:
        batch = next(self._source)
        hosts = tensors_to_copy(batch, self._device)
        if not hosts:
            return batch, [], None
        copies, ready = self._side.copy(hosts)
        return batch, list(zip(hosts, copies, strict=True)), ready

    def _read_next(self) -> None:
        try:
            self._held = self._fetch()
        except StopIteration:
            self._ended = StopIteration()
            return
        except Exception as error:  # the batch's own error, raised when the loop asks for it
            self._ended = error
            return
        if self._counts is not None:
            self._counts.consumed -= 1

    def _hand_over(self, pairs: list, ready: Any) -> None:
        """Make the copies of the batch being handed to the loop usable by its step."""
        table = self._table
        self._copying.judge(table, len(pairs), self._device)
        if pairs:
            self._side.hand_over([copy for _, copy in pairs], ready)
        table.put(pairs)


class _Copying:
    """Whether a run still copies batches. It stops after ``UNUSED_LIMIT`` batches in a row
    whose copies the data preprocessor did not take (its model moves the batch itself), or,
    with ``stop_when_empty``, that had nothing to copy (the loader gives device tensors)."""

    def __init__(self, stop_when_empty: bool = True) -> None:
        self.on = True
        self._stop_when_empty = stop_when_empty
        # How many copies the last batch handed over had, and the batches in a row whose
        # copies were not taken / that had none.
        self._last_put = 0
        self._untaken = 0
        self._empty = 0

    def judge(self, table: PrefetchedCopies, copies: int, device: torch.device) -> None:
        """Called as a batch with ``copies`` copies is handed over; ``table`` still holds the
        last one's, whose step is done."""
        if self._last_put:
            self._untaken = 0 if table.hits else self._untaken + 1
        self._empty = 0 if copies else self._empty + 1
        self._last_put = copies
        if not self.on:
            return
        if self._untaken >= UNUSED_LIMIT:
            why = (
                f"the data preprocessor took none of the copies of {UNUSED_LIMIT} batches in a "
                "row (the model moves its batches itself?)"
            )
        elif self._stop_when_empty and self._empty >= UNUSED_LIMIT:
            why = f"{UNUSED_LIMIT} batches in a row were on {device} already"
        else:
            return
        self.on = False
        print_log(
            f"device prefetch: {why}: batches are no longer copied ahead; set "
            f"{SETTING_KEY}=False to say so",
            logger="current",
            level=logging.INFO,
        )


class Plan:
    """How a train loop's batches go to the device for one run: the side stream, the table
    the data preprocessor reads, and whether a batch is read ahead."""

    def __init__(
        self, loop: Any, side: SideStream, preprocessor: BaseDataPreprocessor, read_ahead: bool
    ) -> None:
        self.side = side
        self.read_ahead = read_ahead
        self.table = PrefetchedCopies(side.device)
        # On the CPU (device_prefetch=True) nothing is ever copied: the path runs all the same.
        self.copying = _Copying(stop_when_empty=not isinstance(side, CpuStream))
        self._counts = getattr(loop, "_worker_streams", None)
        preprocessor._prefetched = self.table

    def wrap(self, iterator: Iterator[Any]) -> DevicePrefetcher:
        return DevicePrefetcher(
            iterator, self.side, self.table, self.read_ahead, self._counts, self.copying
        )


def _preprocessor_of(loop: Any) -> tuple[BaseDataPreprocessor | None, str]:
    """The data preprocessor that will take the copies, or None and why there is none."""
    runner = loop.runner
    model = getattr(runner, "model", None)
    if model is None:
        return None, "the runner has no model"
    train_step = getattr(model, "train_step", None)
    if getattr(train_step, "__treadle_compiled__", False):
        return None, "train_step is compiled (compile target='train_step')"
    preprocessor = getattr(unwrap_model(model), "data_preprocessor", None)
    if not isinstance(preprocessor, BaseDataPreprocessor):
        kind = type(preprocessor).__name__
        return None, f"the model's data_preprocessor ({kind}) is no BaseDataPreprocessor"
    return preprocessor, ""


def _reads_ahead(dataloader: Any) -> bool:
    """Whether a batch may be read ahead: DataLoader workers load it (nothing is drawn from the
    main process's generators) and the saved position follows from the batches counted."""
    if getattr(dataloader, "num_workers", 0) <= 0:
        return False
    sampler = stateful_sampler(dataloader)
    if sampler is None or hasattr(sampler, "samples_after"):
        return True
    return _plain_batch_size(dataloader) is not None


def make_plan(loop: Any) -> Plan | None:
    """The plan of ``loop`` for this run (None: batches go as they are), logged once."""
    setting = check_setting(getattr(loop, "device_prefetch", None))
    if setting is False:
        return None
    preprocessor, reason = _preprocessor_of(loop)
    side = None
    if preprocessor is not None:
        device = preprocessor._device_here
        side = side_stream_for(device)
        if side is None and setting and device.type == "cpu":
            side = CpuStream(device)
        elif side is None:
            reason = f"{device} has no side streams"
    if side is None or preprocessor is None:
        if setting:
            print_log(
                f"{SETTING_KEY}=True, but batches are not copied ahead: {reason}",
                logger="current",
                level=logging.WARNING,
            )
        return None
    read_ahead = _reads_ahead(loop.dataloader)
    print_log(
        _describe(side.device, read_ahead, loop.dataloader), logger="current", level=logging.INFO
    )
    return Plan(loop, side, preprocessor, read_ahead)


def _describe(device: torch.device, read_ahead: bool, dataloader: Any) -> str:
    """The log line of a run that copies its batches ahead."""
    if device.type == "cpu":
        where = "the CPU has nothing to copy (the path runs, for tests)"
    else:
        where = f"train batches are copied to {device} on a side stream"
    how = "the next batch read ahead" if read_ahead else "from when the loop takes each batch"
    note = ""
    if device.type != "cpu" and not getattr(dataloader, "pin_memory", False):
        note = (
            "; the DataLoader does not pin memory (train_dataloader.pin_memory=False): each "
            "copy waits for the host"
        )
    return f"device prefetch: {where}, {how}{note} ({SETTING_KEY}=False turns it off)"


_UNDECIDED = object()


def prefetched(loop: Any, iterator: Iterator[Any]) -> Iterator[Any]:
    """``iterator`` (batches of ``loop``'s train dataloader), with each batch copied to the
    device ahead of its step where the run's plan says so. The plan is made at the loop's first
    call, when training starts (the model is on its device by then).

    Example:
        >>> iterator = prefetched(loop, iter(loop.dataloader))  # doctest: +SKIP
    """
    plan = loop.__dict__.get("_device_prefetch_plan", _UNDECIDED)
    if plan is _UNDECIDED:
        plan = loop.__dict__["_device_prefetch_plan"] = make_plan(loop)
    if plan is None or isinstance(iterator, DevicePrefetcher):
        return iterator
    return plan.wrap(iterator)
