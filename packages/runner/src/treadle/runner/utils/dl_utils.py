"""The torch helpers of ``mmengine.utils.dl_utils``.

Importing this module imports torch (``treadle.runner.utils`` itself does not).
``collect_env`` and ``set_multi_processing`` live with the Runner, in
``treadle.runner.runner.env``.

Example:
    >>> from treadle.runner.utils.dl_utils import is_norm, torch_meshgrid
    >>> is_norm(torch.nn.BatchNorm2d(3))
    True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from treadle.logging import print_log

from .errors import UtilsValueError

TORCH_VERSION = torch.__version__

# What MMEngine counts as a normalization layer.
_NORM_TYPES: tuple[type, ...] = (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm)
_NORM_TYPES += (nn.modules.instancenorm._InstanceNorm,)


def is_norm(layer: nn.Module, exclude: type | tuple[type, ...] | None = None) -> bool:
    """Whether ``layer`` is a batch, group, layer or instance norm (and not one of ``exclude``).

    Example:
        >>> is_norm(nn.LayerNorm(4)), is_norm(nn.Linear(2, 2))
        (True, False)
    """
    if exclude is not None:
        if not isinstance(exclude, tuple):
            exclude = (exclude,)
        if not all(isinstance(kind, type) for kind in exclude):
            raise TypeError(f"exclude must be a class or a tuple of classes, got {exclude!r}")
        if isinstance(layer, exclude):
            return False
    return isinstance(layer, _NORM_TYPES)


def has_batch_norm(model: nn.Module) -> bool:
    """Whether ``model`` or any of its submodules is a batch norm layer."""
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())


def is_jit_tracing() -> bool:
    """Whether the code runs under ``torch.jit.trace``."""
    return torch.jit.is_tracing()


def torch_meshgrid(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``torch.meshgrid`` with ``indexing='ij'``, the behaviour older torch had by default."""
    return torch.meshgrid(*tensors, indexing="ij")


def load_url(url: str, model_dir: str | None = None, map_location: Any = None, **kwargs: Any):
    """Download (once, into the torch hub cache) and load the checkpoint at ``url``."""
    return torch.hub.load_state_dict_from_url(
        url, model_dir=model_dir, map_location=map_location, **kwargs
    )


def mmcv_full_available() -> bool:
    """Whether mmcv with its compiled ops is installed (treadle never needs it)."""
    try:
        import mmcv.ops  # noqa: F401
    except ImportError:
        return False
    return True


def tensor2imgs(
    tensor: torch.Tensor,
    mean: Iterable[float] | None = None,
    std: Iterable[float] | None = None,
    to_bgr: bool = True,
) -> list[np.ndarray]:
    """Undo the normalization of an (N, C, H, W) batch (C = 1 or 3): N (H, W, C) arrays of the
    tensor's dtype, BGR with ``to_bgr``.

    Example:
        >>> imgs = tensor2imgs(torch.zeros(2, 3, 4, 5), mean=(0, 0, 0), std=(1, 1, 1))
        >>> len(imgs), imgs[0].shape, imgs[0].dtype
        (2, (4, 5, 3), dtype('float32'))
    """
    if not torch.is_tensor(tensor) or tensor.ndim != 4 or tensor.shape[1] not in (1, 3):
        raise ValueError(
            "tensor2imgs takes a tensor of shape (N, C, H, W) with C = 1 or 3, got "
            f"{type(tensor).__name__} of shape {tuple(getattr(tensor, 'shape', ()))}"
        )
    channels = tensor.shape[1]
    mean = (0.0,) * channels if mean is None else tuple(mean)
    std = (1.0,) * channels if std is None else tuple(std)
    if len(mean) != channels or len(std) != channels:
        raise ValueError(
            f"mean and std need one value per channel ({channels}), got mean={mean} std={std}"
        )
    if channels == 1 and to_bgr:
        raise ValueError("to_bgr=True needs 3 channels; pass to_bgr=False for gray images")
    images = tensor.detach().cpu().permute(0, 2, 3, 1)
    images = images * images.new_tensor(std) + images.new_tensor(mean)
    if to_bgr:
        images = images.flip(-1)  # the batch holds RGB; OpenCV-style images are BGR
    # As in MMEngine, values are neither rounded nor clipped: the caller picks the conversion.
    return [np.ascontiguousarray(image) for image in images.numpy()]


class TimeCounter:
    """Time a function (as a decorator) or a block (as a context manager) and log the mean
    time per run every ``log_interval`` runs, the first ``warmup_interval - 1`` runs left out.

    Counters are shared by tag, as in MMEngine: ``TimeCounter(tag='decode')`` written inside a
    loop is the same counter at each pass, so its runs add up (the arguments of later calls are
    ignored). A block needs a tag, to tell it apart in the log; a function is named by its own
    name unless a tag is given. The mean goes to ``logger`` (the current Logger by default).

    Example:
        >>> @TimeCounter(log_interval=10, tag='decode')
        ... def decode(x):
        ...     return x
        >>> for step in range(3):
        ...     with TimeCounter(tag='block'):
        ...         pass
        >>> TimeCounter(tag='block').count
        3
    """

    #: The counter of each tag.
    instance_dict: ClassVar[dict[str, TimeCounter]] = {}

    log_interval: int
    warmup_interval: int
    with_sync: bool
    tag: str | None
    logger: Any
    count: int

    def __new__(
        cls,
        log_interval: int = 1,
        warmup_interval: int = 1,
        with_sync: bool = True,
        tag: str | None = None,
        logger: Any = None,
    ) -> TimeCounter:
        for name, value in (("log_interval", log_interval), ("warmup_interval", warmup_interval)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                # "must be greater than 0": what MMEngine asserts for warmup_interval.
                raise UtilsValueError(
                    f"TimeCounter's {name} must be greater than 0 (an int >= 1), got {value!r}"
                )
        if tag is not None and tag in cls.instance_dict:
            return cls.instance_dict[tag]
        # No __init__: it would run again on the shared counter a later call returns.
        counter = super().__new__(cls)
        counter.log_interval = log_interval
        counter.warmup_interval = warmup_interval
        counter.with_sync = with_sync
        counter.tag = tag
        counter.logger = logger
        counter.count = 0
        counter._total = 0.0
        counter._start = 0.0
        if tag is not None:
            cls.instance_dict[tag] = counter
        return counter

    def _sync(self) -> None:
        # A GPU kernel runs after its launch returns: wait for it, or the time is the launch's.
        if self.with_sync and torch.cuda.is_available():
            torch.cuda.synchronize()

    def __enter__(self) -> TimeCounter:
        if self.tag is None:
            raise UtilsValueError(
                "a TimeCounter used as a context manager needs a tag to tell its lines apart "
                "in the log: please specify the tag parameter, TimeCounter(tag='...')"
            )
        self.count += 1
        self._sync()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._sync()
        self._record(time.perf_counter() - self._start)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        if self.tag is None:
            self.tag = getattr(fn, "__name__", repr(fn))

        @wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            self._sync()
            start = time.perf_counter()
            result = fn(*args, **kwargs)
            self._sync()
            self._record(time.perf_counter() - start)
            return result

        return timed

    def _record(self, seconds: float) -> None:
        # MMEngine's arithmetic: runs from the warmup_interval-th on are counted, and the line
        # names the number of runs so far.
        if self.count < self.warmup_interval:
            return
        self._total += seconds
        if self.count % self.log_interval == 0:
            mean = self._total / (self.count - self.warmup_interval + 1)
            print_log(
                f"[{self.tag}]-time per run averaged in the past {self.count} runs: "
                f"{mean * 1000:.1f} ms",
                logger=self.logger if self.logger is not None else "current",
            )
