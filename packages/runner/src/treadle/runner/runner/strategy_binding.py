"""The strategy a runner saves and loads through, holding the runner's current objects.

The Runner owns its model, optimizer wrapper and schedulers (hooks and user code may replace
them: resuming builds the optimizer wrapper when it is still a config); before each use the
strategy is told which objects are current, so its state methods work on the Runner's objects.
An object with the Runner's public surface but no ``strategy`` (a test stand-in) gets a
SingleDeviceStrategy.
"""

from __future__ import annotations

from typing import Any

from treadle.runner.strategies import BaseStrategy, SingleDeviceStrategy


def bound_strategy(runner: Any) -> BaseStrategy:
    """``runner.strategy`` (or a SingleDeviceStrategy) with ``model``, ``optim_wrapper`` and
    ``param_schedulers`` set to the runner's.

    Example:
        >>> bound_strategy(runner).model_state_dict().keys()  # doctest: +SKIP
        odict_keys(['linear.weight', 'linear.bias'])
    """
    strategy = getattr(runner, "strategy", None)
    if strategy is None:
        strategy = SingleDeviceStrategy()
    strategy.model = runner.model
    wrapper = getattr(runner, "optim_wrapper", None)
    # A config (not built yet) is not the strategy's business: it has no state.
    strategy.optim_wrapper = wrapper if callable(getattr(wrapper, "state_dict", None)) else None
    schedulers = getattr(runner, "param_schedulers", None)
    strategy.param_schedulers = schedulers if _built(schedulers) else None
    return strategy


def _built(schedulers: Any) -> bool:
    if schedulers is None:
        return False
    groups = schedulers.values() if isinstance(schedulers, dict) else [schedulers]
    return all(
        callable(getattr(s, "state_dict", None))
        for group in groups
        for s in (group if isinstance(group, (list, tuple)) else [group])
    )
