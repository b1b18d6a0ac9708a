"""The ``elastic`` setting: one global batch per step, whatever the number of processes.

``elastic = dict(global_batch_size=G)`` fixes what one optimizer step sees: ``G`` samples, the
same ``G`` at every world size. Each of the ``W`` processes takes an equal, contiguous share of
``S = G / W`` samples of every global batch; ``micro_batch_size=m`` (optional) caps what one
process puts through one forward/backward, and gradient accumulation over ``k`` equal
micro-batches (the fewest with ``S / k <= m``) makes up the share. Equal shares keep every
rank's loss a plain mean over as many samples as the others', so the mean of the ranks'
gradients (what DDP computes) is the gradient of the global batch's mean loss, whatever the
loss is made of.

Where ``W`` does not divide ``G``, accumulation makes up the difference if it is allowed
(``micro_batch_size`` set): the first ``G % W`` processes take one sample more, every process
runs the same number ``k`` of micro-batches (the fewest with none over ``m``; DDP syncs on the
last), and each micro-batch's loss is weighted by its share of the global batch
(``n * W * k / G`` on top of the accumulation's ``1 / k``, see :meth:`ElasticPlan.weight`): the
gradient is the global batch's mean again for a loss that is a mean over its samples, as
MMEngine's losses are. Without ``micro_batch_size`` such a ``G`` is refused.

Example:
    >>> plan = elastic_plan(dict(global_batch_size=64, micro_batch_size=16), world_size=2)
    >>> plan.per_rank, plan.micro_steps, plan.micro_batch
    (32, 2, 16)
    >>> uneven = elastic_plan(dict(global_batch_size=8, micro_batch_size=2), world_size=3)
    >>> [uneven.share(rank) for rank in range(3)], uneven.micro_steps, uneven.micro_sizes(2)
    ([3, 3, 2], 2, [1, 1])
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
    """How a global batch is shared: ``world_size`` processes take ``per_rank`` samples each
    (the first ``global_batch_size % world_size`` of them: the others one less), in
    ``micro_steps`` forward/backward passes of at most ``micro_batch`` samples."""

    global_batch_size: int
    world_size: int
    per_rank: int
    micro_steps: int
    micro_batch_size: int | None = None

    @property
    def micro_batch(self) -> int:
        """Samples of one forward/backward of one process (the largest, where they differ)."""
        return -(-self.per_rank // self.micro_steps)

    @property
    def even(self) -> bool:
        """Whether every process takes as many samples as the others."""
        return self.global_batch_size % self.world_size == 0

    def share(self, rank: int) -> int:
        """Samples of each global batch that process ``rank`` takes."""
        base, extra = divmod(self.global_batch_size, self.world_size)
        return base + (rank < extra)

    def offset(self, rank: int) -> int:
        """Where the share of process ``rank`` starts in a global batch."""
        base, extra = divmod(self.global_batch_size, self.world_size)
        return rank * base + min(rank, extra)

    def micro_sizes(self, rank: int) -> list[int]:
        """The sizes of the micro-batches of process ``rank``: its share in ``micro_steps``
        parts, the first ones one sample larger where they cannot be equal."""
        return split_sizes(self.share(rank), self.micro_steps)

    def weight(self, samples: int) -> float:
        """The factor on the loss of a micro-batch of ``samples`` samples, on top of the
        accumulation's ``1 / micro_steps`` and DDP's mean over the processes, that makes the
        step's gradient the global batch's mean: ``samples * world_size * micro_steps / G``
        (1 for every micro-batch where the shares are equal)."""
        return samples * self.world_size * self.micro_steps / self.global_batch_size

    def describe(self) -> str:
        """One line for the log."""
        if self.even:
            shares = f"{self.per_rank} samples"
        else:
            shares = f"{', '.join(str(self.share(r)) for r in range(self.world_size))} samples"
        accumulation = (
            f" in {self.micro_steps} micro-batches of {self.micro_batch} (gradient accumulation)"
            if self.micro_steps > 1
            else ""
        )
        weighted = "" if self.even else " (each micro-batch's loss weighted by its share)"
        return (
            f"elastic: global batch of {self.global_batch_size} samples per step = "
            f"{self.world_size} process(es) x {shares}{accumulation}{weighted}"
        )


def split_sizes(count: int, parts: int) -> list[int]:
    """``count`` in ``parts`` sizes that differ by one at most, the larger first.

    Example:
        >>> split_sizes(7, 3)
        [3, 2, 2]
    """
    base, extra = divmod(count, parts)
    return [base + (part < extra) for part in range(parts)]


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
        f"samples per process, and without gradient accumulation every process takes an equal "
        f"part of each global batch. Run with a number of processes that divides "
        f"{global_batch} ({sizes}), set elastic.global_batch_size to a multiple of "
        f"{world_size} (e.g. {choices}; a new global batch size starts a new run: its "
        f"checkpoints do not resume with another), or allow accumulation with "
        f"elastic.micro_batch_size, which lets the processes take unequal parts (each "
        f"micro-batch's loss is then weighted by its share: exact for losses that are means "
        f"over their samples)"
    )


def elastic_plan(elastic: Any, world_size: int) -> ElasticPlan | None:
    """The plan of an ``elastic`` setting at ``world_size`` processes (None without one); an
    :class:`ElasticConfigError` naming the global batch, the world size and the setting to
    change when the processes cannot share the global batch equally.

    Example:
        >>> elastic_plan(dict(global_batch_size=64), 3)  # doctest: +IGNORE_EXCEPTION_DETAIL
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
        if micro_limit is None:
            raise _not_shared(global_batch, world_size)
        return _uneven_plan(global_batch, world_size, micro_limit)
    per_rank = global_batch // world_size
    steps = 1
    if micro_limit is not None:
        # The fewest equal micro-batches that fit: the smallest divisor k of the share with
        # share / k <= micro_batch_size.
        steps = next(k for k in _divisors(per_rank) if per_rank // k <= micro_limit)
    return ElasticPlan(global_batch, world_size, per_rank, steps, micro_limit)


def _uneven_plan(global_batch: int, world_size: int, micro_limit: int) -> ElasticPlan:
    """Unequal shares, made up by accumulation: the same number of micro-batches everywhere."""
    base = global_batch // world_size
    steps = -(-(base + 1) // micro_limit)  # the fewest that keep the largest share within m
    if base < steps:
        raise ElasticConfigError(
            f"elastic: global_batch_size={global_batch} cannot be shared by this run's "
            f"{world_size} processes in micro-batches of at most {micro_limit}: every process "
            f"runs the same {steps} micro-batch(es) (DDP syncs their gradients together), and "
            f"a process with {base} sample(s) of each global batch cannot fill them. Raise "
            f"elastic.micro_batch_size, raise elastic.global_batch_size, or run with fewer "
            f"processes"
        )
    return ElasticPlan(global_batch, world_size, base + 1, steps, micro_limit)
