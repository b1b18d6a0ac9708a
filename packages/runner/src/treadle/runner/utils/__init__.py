"""treadle.runner.utils: small helpers, following MMEngine 0.10's ``mmengine.utils``.

``from mmengine.utils import is_list_of, ProgressBar`` becomes
``from treadle.runner.utils import is_list_of, ProgressBar``. ManagerMixin and ManagerMeta live
in treadle.logging; ``import_modules_from_strings`` is treadle.config's, re-exported here.

Importing this module imports neither torch nor rich: rich is loaded when a progress bar is
drawn on a terminal.
"""

from __future__ import annotations

from .deprecation import deprecated_api_warning, deprecated_function
from .lazy import lazy_attributes
from .objects import apply_to, get_object_from_string, has_method, is_method_overridden
from .package_install import call_command, install_package
from .packages import get_installed_path, is_installed
from .paths import check_file_exist, fopen, is_abs, is_filepath, mkdir_or_exist, scandir, symlink
from .prerequisites import check_prerequisites, requires_executable, requires_package
from .progress_bar import ProgressBar
from .sequences import (
    concat_list,
    is_list_of,
    is_seq_of,
    is_str,
    is_tuple_of,
    iter_cast,
    list_cast,
    slice_list,
    to_1tuple,
    to_2tuple,
    to_3tuple,
    to_4tuple,
    to_ntuple,
    tuple_cast,
)
from .timer import Timer, TimerError, check_time
from .track import track_iter_progress, track_parallel_progress, track_progress
from .track_rich import track_progress_rich
from .versions import digit_version, get_git_hash

__all__ = [
    "ProgressBar",
    "Timer",
    "TimerError",
    "apply_to",
    "call_command",
    "check_file_exist",
    "check_prerequisites",
    "check_time",
    "concat_list",
    "deprecated_api_warning",
    "deprecated_function",
    "digit_version",
    "fopen",
    "get_git_hash",
    "get_installed_path",
    "get_object_from_string",
    "has_method",
    "import_modules_from_strings",
    "install_package",
    "is_abs",
    "is_filepath",
    "is_installed",
    "is_list_of",
    "is_method_overridden",
    "is_seq_of",
    "is_str",
    "is_tuple_of",
    "iter_cast",
    "list_cast",
    "mkdir_or_exist",
    "requires_executable",
    "requires_package",
    "scandir",
    "slice_list",
    "symlink",
    "to_1tuple",
    "to_2tuple",
    "to_3tuple",
    "to_4tuple",
    "to_ntuple",
    "track_iter_progress",
    "track_parallel_progress",
    "track_progress",
    "track_progress_rich",
    "tuple_cast",
]


# treadle.config (and its YAML loader) is loaded only by the one helper that lives there.
# ManagerMixin and ManagerMeta (mmengine.utils names) live in treadle.logging.
__getattr__ = lazy_attributes(
    __name__,
    {
        "import_modules_from_strings": "treadle.config",
        "ManagerMeta": "treadle.logging",
        "ManagerMixin": "treadle.logging",
    },
)
