"""treadle.visual: the Visualizer and tracker backends (TensorBoard, Aim, MLflow, W&B, ...).

The API follows MMEngine 0.10's ``mmengine.visualization``: ``from mmengine.visualization
import Visualizer`` becomes ``from treadle.visual import Visualizer``. Importing it loads numpy,
but neither matplotlib, torch nor any tracker library: matplotlib is imported by the first
drawing call (or ``plot_scalars``), and each backend imports its library the first time it
writes.
"""

from typing import Any

from .backends import (
    AimVisBackend,
    BaseVisBackend,
    ClearMLVisBackend,
    DVCLiveVisBackend,
    LocalVisBackend,
    MLflowVisBackend,
    NeptuneVisBackend,
    TensorboardVisBackend,
    WandbVisBackend,
)
from .backends.base import force_init_env
from .registry import VISBACKENDS, VISUALIZERS
from .run_history import read_history
from .scalars_file import find_scalars_file, read_scalars
from .visualizer import Visualizer

__version__ = "0.1.1"

__all__ = [
    "VISBACKENDS",
    "VISUALIZERS",
    "AimVisBackend",
    "BaseVisBackend",
    "ClearMLVisBackend",
    "DVCLiveVisBackend",
    "LocalVisBackend",
    "MLflowVisBackend",
    "NeptuneVisBackend",
    "TensorboardVisBackend",
    "Visualizer",
    "WandbVisBackend",
    "__version__",
    "find_scalars_file",
    "force_init_env",
    "plot_scalars",
    "read_history",
    "read_scalars",
]


def __getattr__(name: str) -> Any:
    # plot_scalars is imported on first access: its module imports matplotlib (about half a
    # second), which a training run that only logs scalars never needs.
    if name == "plot_scalars":
        from .plot import plot_scalars

        return plot_scalars
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
