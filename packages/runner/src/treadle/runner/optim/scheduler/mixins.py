"""LRSchedulerMixin and MomentumSchedulerMixin: a ParamScheduler fixed to the learning rate or
to the momentum.

Put first among the bases (``class StepLR(LRSchedulerMixin, StepParamScheduler)``), a mixin
fills in ``param_name``. Adam-family optimizers have no ``momentum`` but ``betas``; their momentum
is ``betas[0]``: the mixin schedules a ``momentum`` key it adds to each group and copies it into
``betas[0]`` after every step.
"""

from __future__ import annotations

from typing import Any

from ._groups import checked_param_groups


class LRSchedulerMixin:
    """Schedules ``'lr'``: every argument but ``param_name`` goes to the ParamScheduler.

    Example:
        >>> import torch
        >>> from treadle.runner.optim.scheduler import StepParamScheduler
        >>> class HalvingLR(LRSchedulerMixin, StepParamScheduler):
        ...     pass
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> HalvingLR(sgd, step_size=1, gamma=0.5).param_name
        'lr'
    """

    def __init__(self, optimizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(optimizer, "lr", *args, **kwargs)  # type: ignore[call-arg]


class MomentumSchedulerMixin:
    """Schedules ``'momentum'``, or ``betas[0]`` for optimizers with ``betas`` (Adam, AdamW...).

    Example:
        >>> import torch
        >>> from treadle.runner.optim.scheduler import StepParamScheduler
        >>> class HalvingMomentum(MomentumSchedulerMixin, StepParamScheduler):
        ...     pass
        >>> adam = torch.optim.Adam([torch.zeros(1, requires_grad=True)], betas=(0.9, 0.999))
        >>> scheduler = HalvingMomentum(adam, step_size=1, gamma=0.5)
        >>> adam.step(); scheduler.step(); adam.param_groups[0]['betas']
        (0.45, 0.999)
    """

    use_betas: bool

    def __init__(self, optimizer: Any, *args: Any, **kwargs: Any) -> None:
        name = type(self).__name__
        groups = checked_param_groups(optimizer, name)
        # The optimizer's defaults say which kind it is (a group may already hold a 'momentum'
        # key that an earlier momentum scheduler added to an Adam group).
        defaults = getattr(optimizer, "defaults", None)
        if not isinstance(defaults, dict):
            defaults = groups[0]
        if "momentum" in defaults:
            self.use_betas = False
        elif "betas" in defaults:
            self.use_betas = True
            for group in groups:
                group["momentum"] = group["betas"][0]
        else:
            raise ValueError(
                f"{name}: optimizer must support momentum when using momentum scheduler, but "
                f"{type(optimizer).__name__} has neither 'momentum' nor 'betas' in its defaults "
                f"({', '.join(k for k in defaults if k != 'params')})"
            )
        super().__init__(optimizer, "momentum", *args, **kwargs)  # type: ignore[call-arg]

    def step(self, *args: Any, **kwargs: Any) -> None:
        """Step the schedule, then copy the momentum into ``betas[0]`` where the optimizer has
        betas."""
        super().step(*args, **kwargs)  # type: ignore[misc]
        if self.use_betas:
            for group in self.optimizer.param_groups:  # type: ignore[attr-defined]
                group["betas"] = (group["momentum"], *group["betas"][1:])
