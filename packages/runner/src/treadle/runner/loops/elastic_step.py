"""One training step of an elastic run: a global batch, whatever the number of processes.

The train loader of a run with ``elastic`` set yields, per step, this process's share of the
global batch (:mod:`treadle.runner.dataset.elastic_sampler`). :class:`ElasticStep` trains it:

- with gradient accumulation (``micro_steps > 1``) the share comes as
  :class:`~treadle.runner.dataset.micro_batches.MicroBatches`; each goes through
  ``model.train_step`` with the optimizer wrapper accumulating ``micro_steps`` calls (its
  ``accumulative_counts``; DDP syncs gradients on the last one only), so one loop iteration is
  still one optimizer step on one global batch, and the iteration counts, the schedules and
  the checkpoints are those of any other world size;
- with several processes, the values the step returns (the losses to log) are averaged over
  the processes in one small all-reduce, so the logged loss is the global batch's at every
  world size (equal shares: the mean of the ranks' means is the global mean).

Each rank's loss is the mean over its share, DDP averages the ranks' gradients, and the
accumulated micro-batches are each divided by ``micro_steps``: the gradient is that of the
global batch's mean loss, the same sum at every world size up to the order of summation.

Where the shares differ (the world size does not divide the global batch; allowed with
accumulation), each micro-batch's loss is also multiplied by its weight
(:meth:`~treadle.runner.dataset.elastic_plan.ElasticPlan.weight`, through the optimizer
wrappers' ``scale_loss`` for that call only), and the logged values are averaged by sample
counts rather than plainly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch

from treadle import dist
from treadle.runner.dataset.elastic_plan import ElasticPlan
from treadle.runner.dataset.micro_batches import MicroBatches


def elastic_plan_of(dataloader: Any) -> ElasticPlan | None:
    """The elastic plan of a train loader built for one, else None."""
    plan = getattr(getattr(dataloader, "batch_sampler", None), "plan", None)
    return plan if isinstance(plan, ElasticPlan) else None


def _wrappers(optim_wrapper: Any) -> list[Any]:
    inner = getattr(optim_wrapper, "optim_wrappers", None)
    if isinstance(inner, Mapping):  # OptimWrapperDict
        return list(inner.values())
    return [optim_wrapper]


class ElasticStep:
    """``step(data_batch, optim_wrapper)``: the train step of one global batch (see the
    module); :meth:`of` gives None where the plain ``model.train_step`` is the same."""

    def __init__(self, runner: Any, plan: ElasticPlan) -> None:
        self.runner = runner
        self.plan = plan
        self.micro_steps = plan.micro_steps
        self.world_size = plan.world_size
        # Unequal shares: this rank's micro-batch sizes and share of the global batch.
        rank = dist.get_rank()
        self.sizes = None if plan.even else plan.micro_sizes(rank)
        self.share = plan.share(rank)

    @classmethod
    def of(cls, runner: Any, dataloader: Any) -> ElasticStep | None:
        """The step for ``dataloader``; refuses a runner with ``elastic`` whose train loader
        was not built for it."""
        plan = elastic_plan_of(dataloader)
        wanted = getattr(runner, "_elastic", None)
        if wanted is not None and plan is None:
            raise TypeError(
                "elastic is set but the train dataloader was not built for it: give "
                "train_dataloader as a config (dict(dataset=..., sampler=...)) that the Runner "
                f"builds, not a built {type(dataloader).__name__}, and do not override "
                "Runner.build_dataloader"
            )
        strategy = type(getattr(runner, "strategy", None)).__name__
        if plan is not None and strategy in ("DeepSpeedStrategy", "ColossalAIStrategy"):
            raise TypeError(
                f"elastic cannot be used with {strategy}: it keeps its own batch sizes and "
                f"gradient accumulation in its config; use DDP or FSDPStrategy with elastic"
            )
        if plan is None or (plan.micro_steps == 1 and plan.world_size == 1):
            return None
        return cls(runner, plan)

    def prepare(self, optim_wrapper: Any, iteration: int, max_iters: int) -> None:
        """Make the optimizer wrapper accumulate ``micro_steps`` calls per step, counted from
        ``iteration`` (call before the first step, after a resume set the iteration)."""
        if self.micro_steps == 1:
            return
        steps = self.micro_steps
        for wrapper in _wrappers(optim_wrapper):
            if not hasattr(wrapper, "_accumulative_counts"):
                raise TypeError(
                    f"elastic gradient accumulation needs an OptimWrapper, got "
                    f"{type(wrapper).__name__}: set elastic.micro_batch_size only with "
                    f"treadle's optimizer wrappers (not DeepSpeed's or ColossalAI's)"
                )
            wrapper._accumulative_counts = steps
        optim_wrapper.initialize_count_status(
            self.runner.model, iteration * steps, max_iters * steps
        )

    def __call__(self, data_batch: Any, optim_wrapper: Any) -> Any:
        if self.sizes is not None:
            return self._unequal(data_batch, optim_wrapper)
        model = self.runner.model
        if self.micro_steps > 1 and isinstance(data_batch, MicroBatches):
            parts = [model.train_step(part, optim_wrapper=optim_wrapper) for part in data_batch]
            outputs = _mean(parts)
        else:
            outputs = model.train_step(data_batch, optim_wrapper=optim_wrapper)
        if self.world_size > 1:
            outputs = _mean_over_ranks(outputs)
        return outputs

    def _unequal(self, data_batch: Any, optim_wrapper: Any) -> Any:
        """The step where the processes' shares differ: weighted losses, weighted logs."""
        model = self.runner.model
        assert self.sizes is not None
        parts = data_batch if isinstance(data_batch, MicroBatches) else [data_batch]
        outputs = []
        for part, samples in zip(parts, self.sizes, strict=True):
            with _weighted_losses(optim_wrapper, self.plan.weight(samples)):
                outputs.append(model.train_step(part, optim_wrapper=optim_wrapper))
        logged = _mean(outputs, self.sizes)
        return _mean_over_ranks(logged, self.share / self.plan.global_batch_size)


@contextmanager
def _weighted_losses(optim_wrapper: Any, weight: float) -> Iterator[None]:
    """Every wrapper's ``scale_loss`` times ``weight``, for the calls inside (the instance's
    own ``scale_loss``, a mock's for example, is put back after)."""
    saved = []
    for wrapper in _wrappers(optim_wrapper):
        own = wrapper.__dict__.get("scale_loss")
        original = wrapper.scale_loss
        saved.append((wrapper, own))
        wrapper.scale_loss = lambda loss, _scale=original: _scale(loss) * weight
    try:
        yield
    finally:
        for wrapper, own in saved:
            if own is None:
                del wrapper.scale_loss
            else:
                wrapper.scale_loss = own


def _scalars(outputs: Any) -> list[str]:
    if not isinstance(outputs, Mapping):
        return []
    return [
        key
        for key, value in outputs.items()
        if isinstance(value, torch.Tensor) and value.numel() == 1 and value.is_floating_point()
    ]


def _mean(parts: list[Any], sizes: list[int] | None = None) -> Any:
    """The micro-batches' outputs averaged (their scalar tensors; other values: the last),
    weighted by their ``sizes`` where given."""
    last = parts[-1]
    keys = _scalars(last)
    if not keys:
        return last
    outputs = dict(last)
    for key in keys:
        values = torch.stack([part[key].reshape(()) for part in parts])
        if sizes is None:
            outputs[key] = values.mean()
        else:
            counts = torch.tensor(sizes, dtype=values.dtype, device=values.device)
            outputs[key] = (values * counts).sum() / counts.sum()
    return outputs


def _mean_over_ranks(outputs: Any, fraction: float | None = None) -> Any:
    """The scalar tensors of ``outputs`` averaged over the processes (one all-reduce); with
    ``fraction`` (this process's part of the global batch), weighted by the parts."""
    keys = _scalars(outputs)
    if not keys:
        return outputs
    values = torch.stack([outputs[key].detach().reshape(()).float() for key in keys])
    if fraction is None:
        dist.all_reduce(values, op="mean")
    else:
        values = values * fraction
        dist.all_reduce(values, op="sum")
    reduced = dict(outputs)
    for key, value in zip(keys, values.unbind(), strict=True):
        reduced[key] = value.to(outputs[key].dtype)
    return reduced
