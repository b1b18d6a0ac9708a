"""The ``elastic`` setting: one global batch per step, whatever the number of processes.

``elastic = dict(global_batch_size=G)`` fixes what one optimizer step sees: ``G`` samples, the
same ``G`` at every world size. Each of the ``W`` processes takes an equal, contiguous share of
``S = G / W`` samples of every global batch; ``micro_batch_size=m`` (optional) caps what one
process puts through one forward/backward, and gradient accumulation over ``k`` equal
micro-batches (the fewest with ``S / k <= m``) makes up the share. Equal shares keep every
rank's loss a plain mean over as many samples as the others', so the mean of the ranks'
gradients (what DDP computes) is the gradient of the global batch's mean loss, whatever the
loss is made of; this is why ``G`` must be a multiple of ``W``.

Example:
    >>> plan = elastic_plan(dict(global_batch_size=64, micro_batch_size=16), world_size=2)
    >>> plan.per_rank, plan.micro_steps, plan.micro_batch
    (32, 2, 16)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KEYS = ("global_batch_size", "micro_batch_size")


class ElasticConfigError(ValueError):
    """An ``elastic`` setting that this run cannot follow (raised before anything is built or
    loaded)."""


@dataclass(frozen=True)
class ElasticPlan:
    """How a global batch is shared: ``world_size`` processes take ``per_rank`` samples each,
    in ``micro_steps`` forward/backward passes of ``micro_batch`` samples."""

    global_batch_size: int
    world_size: int
    per_rank: int
    micro_steps: int
    micro_batch_size: int | None = None

    @property
    def micro_batch(self) -> int:
        """Samples of one forward/backward of one process."""
        return self.per_rank // self.micro_steps

    def describe(self) -> str:
        """One line for the log."""
        accumulation = (
            f" in {self.micro_steps} micro-batches of {self.micro_batch} (gradient accumulation)"
            if self.micro_steps > 1
            else ""
        )
        return (
            f"elastic: global batch of {self.global_batch_size} samples per step = "
            f"{self.world_size} process(es) x {self.per_rank} samples{accumulation}"
        )


def _positive_int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TypeError(f"elastic.{key} must be a positive int, got {value!r}")
    return value


def _divisors(number: int) -> list[int]:
    return [d for d in range(1, number + 1) if number % d == 0]


def _not_shared(global_batch: int, world_size: int) -> ElasticConfigError:
    lower = global_batch - global_batch % world_size
    upper = lower + world_size
    sizes = ", ".join(map(str, [d for d in _divisors(global_batch) if d <= 64][:12]))
    choices = f"{lower} or {upper}" if lower else f"{upper}"
    return ElasticConfigError(
        f"elastic: global_batch_size={global_batch} cannot be shared by this run's "
        f"{world_size} processes: {global_batch} / {world_size} is not a whole number of "
        f"samples per process, and every process takes an equal part of each global batch "
        f"(gradient accumulation, elastic.micro_batch_size, only splits a process's part). "
        f"Run with a number of processes that divides {global_batch} ({sizes}), or set "
        f"elastic.global_batch_size to a multiple of {world_size} (e.g. {choices}; a new "
        f"global batch size starts a new run: its checkpoints do not resume with another)"
    )


def elastic_plan(elastic: Any, world_size: int) -> ElasticPlan | None:
    """The plan of an ``elastic`` setting at ``world_size`` processes (None without one); an
    :class:`ElasticConfigError` naming the global batch, the world size and the setting to
    change when the processes cannot share the global batch equally.

    Example:
        >>> elastic_plan(dict(global_batch_size=64), world_size=3)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ElasticConfigError: elastic: global_batch_size=64 cannot be shared by this run's 3 ...
    """
    if elastic is None:
        return None
    if isinstance(elastic, ElasticPlan):
        elastic = dict(
            global_batch_size=elastic.global_batch_size,
            micro_batch_size=elastic.micro_batch_size,
        )
    if not isinstance(elastic, Mapping):
        raise TypeError(
            f"elastic must be a dict such as dict(global_batch_size=64), got "
            f"{type(elastic).__name__}: {elastic!r}"
        )
    unknown = sorted(set(elastic) - set(KEYS))
    if unknown:
        raise KeyError(
            f"elastic has no setting {', '.join(map(repr, unknown))}: it takes {' and '.join(KEYS)}"
        )
    if "global_batch_size" not in elastic:
        raise KeyError("elastic needs global_batch_size: elastic=dict(global_batch_size=64)")
    global_batch = _positive_int(elastic["global_batch_size"], "global_batch_size")
    micro_limit = elastic.get("micro_batch_size")
    if micro_limit is not None:
        micro_limit = _positive_int(micro_limit, "micro_batch_size")
    if global_batch % world_size:
        raise _not_shared(global_batch, world_size)
    per_rank = global_batch // world_size
    steps = 1
    if micro_limit is not None:
        # The fewest equal micro-batches that fit: the smallest divisor k of the share with
        # share / k <= micro_batch_size.
        steps = next(k for k in _divisors(per_rank) if per_rank // k <= micro_limit)
    return ElasticPlan(global_batch, world_size, per_rank, steps, micro_limit)
