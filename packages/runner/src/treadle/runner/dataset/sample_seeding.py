"""Per-sample randomness: a sample draws the same random numbers whoever loads it.

With ``elastic`` set, the train loader reads each sample through :func:`seeded_item`: Python's
``random``, NumPy's global generator and torch's CPU generator are seeded from (the sampler's
seed, the epoch, the sample's dataset index) for the duration of ``dataset[index]`` (its
transforms included), then put back as they were, so that code outside the dataset draws what
it would have drawn without it. A sample is therefore augmented identically on any rank, in
any worker, at any world size, and after a resume.

The key travels with the index from the sampler (:class:`SampleKey`): the stream seed of the
epoch is computed once per epoch, the sample's own seed is a few integer operations.
Not covered: generators a dataset keeps for itself (``np.random.default_rng()`` made once),
accelerator generators, and randomness in ``collate_fn``.

Example:
    >>> import random
    >>> key = SampleKey(stream_seed(seed=0, epoch=3), 7)
    >>> class Noisy:
    ...     def __getitem__(self, index):
    ...         return index + random.random()
    >>> seeded_item(Noisy(), key) == seeded_item(Noisy(), key)
    True
"""

from __future__ import annotations

import ctypes
import random
from typing import Any, NamedTuple

import numpy as np
import torch

_MASK = (1 << 64) - 1


def _mix(value: int) -> int:
    """A 64-bit integer mixer (SplitMix64's finalizer): close numbers give unrelated ones."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK
    return value ^ (value >> 31)


def stream_seed(seed: int, epoch: int) -> int:
    """The seed of an epoch's samples (computed once per epoch)."""
    return _mix(_mix(seed & _MASK) ^ (epoch & _MASK))


def sample_seed(stream: int, index: int) -> int:
    """The 64-bit seed of sample ``index`` in the epoch of ``stream``."""
    return _mix(stream ^ ((index * 0xD1B54A32D192ED03) & _MASK))


class SampleKey(NamedTuple):
    """What an elastic sampler hands the loader for one sample: the epoch's stream seed and
    the dataset index."""

    stream: int
    sample: int


_torch_generator = torch.default_generator

# NumPy's MT19937 state in memory: 624 uint32 words and the position (an int).
_MT_BYTES = 624 * 4 + 4


def _mt_state_view(bit_generator: Any) -> np.ndarray:
    address = bit_generator.ctypes.state_address
    return np.ctypeslib.as_array((ctypes.c_uint8 * _MT_BYTES).from_address(address))


def _mt_view_works() -> bool:
    """Whether copying the bytes of an MT19937 state saves and restores it (checked on a
    private generator against NumPy's own ``state``)."""
    generator = np.random.MT19937(12345)
    generator.random_raw(7)
    view = _mt_state_view(generator)
    saved = view.copy()
    expected = generator.state["state"]
    words = saved[: 624 * 4].view(np.uint32)
    position = int(saved[624 * 4 :].view(np.int32)[0])
    if not np.array_equal(words, expected["key"]) or position != expected["pos"]:
        return False
    first = generator.random_raw(700)  # past the end of the 624-word block: a refill
    view[:] = saved
    return bool(np.array_equal(first, generator.random_raw(700)))


class _NumpyGlobalState:
    """Saves and restores the state of NumPy's global generator: the generator's bytes copied
    (under a microsecond) where that is checked to work, else ``get_state``/``set_state``
    (about 100 microseconds together). The bytes leave out the legacy generator's cached
    second normal deviate, which a sample's seeding clears: code outside the dataset that
    had one cached draws a fresh pair instead."""

    def __init__(self) -> None:
        self.view: np.ndarray | None = None
        try:
            bit_generator = np.random.mtrand._rand._bit_generator
            if isinstance(bit_generator, np.random.MT19937) and _mt_view_works():
                self.view = _mt_state_view(bit_generator)
        except Exception:  # another NumPy layout: the slow, public way
            self.view = None

    def save(self) -> Any:
        view = self.view
        return np.random.get_state() if view is None else view.copy()

    def restore(self, saved: Any) -> None:
        view = self.view
        if view is None:
            np.random.set_state(saved)
        else:
            view[:] = saved


_numpy_state: _NumpyGlobalState | None = None


def seeded_item(dataset: Any, key: SampleKey) -> Any:
    """``dataset[key.sample]`` with Python's, NumPy's and torch's global generators seeded
    from ``key`` while it runs, and put back afterwards."""
    global _numpy_state
    numpy_state = _numpy_state
    if numpy_state is None:  # made in the process that reads (a DataLoader worker)
        numpy_state = _numpy_state = _NumpyGlobalState()
    seed = sample_seed(key.stream, key.sample)
    python_saved = random.getstate()
    numpy_saved = numpy_state.save()
    torch_saved = _torch_generator.get_state()
    random.seed(seed)
    np.random.seed(seed >> 32)
    _torch_generator.manual_seed(seed)
    try:
        return dataset[key.sample]
    finally:
        random.setstate(python_saved)
        numpy_state.restore(numpy_saved)
        _torch_generator.set_state(torch_saved)
