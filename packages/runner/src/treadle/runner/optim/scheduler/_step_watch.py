"""Notice a ``scheduler.step()`` that comes before the first ``optimizer.step()``.

PyTorch skips the first value of a schedule when the calls come in that order, so the first
scheduler step warns about it. MMEngine replaces ``optimizer.step`` on the instance with a
counting wrapper; here a step post-hook of the torch optimizer (under a wrapper, its
``.optimizer``) sets a flag, and is removed as soon as it has been read, so a training step
pays nothing for it afterwards.
"""

from __future__ import annotations

import weakref
from typing import Any


class OptimizerStepWatch:
    """Whether the torch optimizer behind ``optimizer`` has stepped since this was made.

    Example:
        >>> import torch
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> watch = OptimizerStepWatch(sgd)
        >>> watch.stepped
        False
        >>> sgd.step(); watch.stepped
        True
    """

    def __init__(self, optimizer: Any) -> None:
        self._stepped = False
        self._handle = None
        target = optimizer
        if not hasattr(target, "register_step_post_hook"):
            target = getattr(optimizer, "optimizer", None)
        if hasattr(target, "register_step_post_hook"):
            # A weak reference: the optimizer must not keep its schedulers' watches alive.
            ref = weakref.ref(self)

            def mark(*_: Any) -> None:
                watch = ref()
                if watch is not None:
                    watch._stepped = True

            self._handle = target.register_step_post_hook(mark)
        else:
            # An optimizer without hooks cannot be watched: never warn about it.
            self._stepped = True

    @property
    def stepped(self) -> bool:
        """True once the optimizer has stepped (or when it cannot be watched)."""
        return self._stepped

    def close(self) -> None:
        """Remove the hook from the optimizer."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def __del__(self) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        # A copy (deepcopy, pickle) must not share or remove the original's hook: it is a
        # watch that never warns.
        return (_settled_watch, ())


def _settled_watch() -> OptimizerStepWatch:
    return OptimizerStepWatch(None)
