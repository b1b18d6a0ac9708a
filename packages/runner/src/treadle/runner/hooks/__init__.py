"""treadle.runner.hooks: the base ``Hook``, hook priorities and every built-in hook.

The API follows MMEngine 0.10's ``mmengine.hooks``: ``from mmengine.hooks import Hook`` becomes
``from treadle.runner.hooks import Hook``. Importing this package registers the built-in hooks
in ``treadle.runner.registry.HOOKS`` (the registry also imports it the first time a hook is
built by name). Hooks receive the runner as an argument; nothing here imports the runner.

Example:
    >>> from treadle.runner.hooks import Hook
    >>> class PrintEpochs(Hook):
    ...     def after_train_epoch(self, runner):
    ...         print('epoch', runner.epoch, 'done')
"""

from .checkpoint_failure import CheckpointSaveError
from .checkpoint_hook import CheckpointHook
from .early_stopping_hook import EarlyStoppingHook
from .ema_hook import EMAHook
from .empty_cache_hook import EmptyCacheHook
from .hook import Hook
from .iter_timer_hook import IterTimerHook
from .logger_hook import LoggerHook
from .naive_visualization_hook import NaiveVisualizationHook
from .npu_profiler_hook import NPUProfilerHook
from .param_scheduler_hook import ParamSchedulerHook
from .priority import Priority, get_priority
from .profiler_hook import ProfilerHook
from .progress_bar_hook import ProgressBarHook
from .runtime_info_hook import RuntimeInfoHook
from .sampler_seed_hook import DistSamplerSeedHook
from .sync_buffer_hook import SyncBuffersHook
from .test_time_aug_hook import PrepareTTAHook, build_runner_with_tta

__all__ = [
    "CheckpointHook",
    "CheckpointSaveError",
    "DistSamplerSeedHook",
    "EMAHook",
    "EarlyStoppingHook",
    "EmptyCacheHook",
    "Hook",
    "IterTimerHook",
    "LoggerHook",
    "NPUProfilerHook",
    "NaiveVisualizationHook",
    "ParamSchedulerHook",
    "PrepareTTAHook",
    "Priority",
    "ProfilerHook",
    "ProgressBarHook",
    "RuntimeInfoHook",
    "SyncBuffersHook",
    "build_runner_with_tta",
    "get_priority",
]
