"""treadle.logging: logging, global named instances (ManagerMixin), MessageHub and HistoryBuffer
for treadle.

The API follows MMEngine 0.10 (``mmengine.logging`` and ``mmengine.utils.ManagerMixin``), so
``from mmengine.logging import MMLogger`` becomes ``from treadle.logging import MMLogger``.
"""

from .history_buffer import HistoryBuffer
from .logger import Logger, MMLogger, print_log
from .manager import ManagerMeta, ManagerMixin
from .message_hub import MessageHub

__version__ = "0.1.1"

__all__ = [
    "HistoryBuffer",
    "Logger",
    "MMLogger",
    "ManagerMeta",
    "ManagerMixin",
    "MessageHub",
    "__version__",
    "print_log",
]
