"""The tracker backends a Visualizer forwards to, each registered in VISBACKENDS.

Importing this package registers every backend; none imports its tracker library until it
first writes.
"""

from .aim_backend import AimVisBackend as AimVisBackend
from .base import BaseVisBackend, force_init_env
from .clearml_backend import ClearMLVisBackend as ClearMLVisBackend
from .dvclive_backend import DVCLiveVisBackend as DVCLiveVisBackend
from .local_backend import LocalVisBackend as LocalVisBackend
from .mlflow_backend import MLflowVisBackend as MLflowVisBackend
from .neptune_backend import NeptuneVisBackend as NeptuneVisBackend
from .tensorboard_backend import TensorboardVisBackend as TensorboardVisBackend
from .wandb_backend import WandbVisBackend as WandbVisBackend

__all__ = ["BaseVisBackend", "force_init_env"]
