"""The switch that makes treadle.visual refuse what MMEngine's visualization refuses.

treadle accepts a few inputs that MMEngine refuses, and draws or records them sensibly:
coordinates as nested lists or plain numbers (MMEngine takes only arrays and tensors), a
feature map as a numpy array, a box with x1 > x2 (drawn with a warning, where MMEngine's
assertion stops a run), an image of another integer dtype than uint8 for the local backend, and
a ``"step"`` key among a tracker's scalars. Code written for MMEngine never relies on that, but
its tests may expect MMEngine's refusal, so treadle-compat turns the switch on at install: each
of those inputs then raises MMEngine's exception type (TypeError or AssertionError) again.

Example:
    >>> from treadle.visual.mmengine_checks import MMEngineChecks
    >>> MMEngineChecks.enabled  # off unless treadle.compat is installed
    False
"""

from __future__ import annotations

from typing import Any

from .errors import VisualTypeError


class MMEngineChecks:
    """Whether treadle.visual refuses what MMEngine 0.10 refuses (on under treadle.compat).

    A class-level switch, like the other compat switches: ``MMEngineChecks.enabled = True``
    affects every Visualizer and backend of the process.

    Example:
        >>> MMEngineChecks.enabled = True  # what treadle.compat.install() does
        >>> MMEngineChecks.enabled = False
    """

    enabled: bool = False


def require_array(name: str, value: Any) -> None:
    """Under MMEngine's checks, refuse a ``value`` that is neither a numpy array nor a tensor,
    as MMEngine's ``check_type`` does (TypeError)."""
    if not MMEngineChecks.enabled:
        return
    import numpy as np

    if isinstance(value, np.ndarray) or (hasattr(value, "detach") and hasattr(value, "cpu")):
        return
    raise VisualTypeError(
        f"`{name}` should be (<class 'numpy.ndarray'>, <class 'torch.Tensor'>), but got "
        f"{type(value)} (MMEngine's check, on under treadle.compat; treadle alone also takes "
        "nested lists and numbers)"
    )
