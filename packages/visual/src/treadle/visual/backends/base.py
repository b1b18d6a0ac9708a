"""``BaseVisBackend``: what every tracker backend implements, and ``force_init_env``."""

from __future__ import annotations

import functools
from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from ..main_process import is_main_process

_Method = TypeVar("_Method", bound=Callable[..., Any])

GLOBAL_STEP_AXIS = "global"
"""``step_axis`` of a tracker: every scalar at the global training iteration, so that train and
validation curves share one x axis."""

CALLER_STEP_AXIS = "caller"
"""``step_axis`` of a backend that writes the ``step`` its caller chose (LocalVisBackend: the
epoch for validation results, MMEngine's meaning in ``scalars.json``)."""


def force_init_env(method: _Method) -> _Method:
    """Run the backend's ``_init_env`` before its first write, on the main process only.

    Backends open their tracker lazily: building one from a config creates no run, no files
    and no connection until something is logged. On other ranks the decorated method does
    nothing and returns None, so only rank 0 writes.

    Example:
        >>> class PrintBackend(BaseVisBackend):
        ...     def _init_env(self):
        ...         self._lines = []
        ...     @property
        ...     def experiment(self):
        ...         return self._lines
        ...     @force_init_env
        ...     def add_scalar(self, name, value, step=0, **kwargs):
        ...         self._lines.append((name, value, step))
        >>> backend = PrintBackend(save_dir=None)
        >>> backend.add_scalar('loss', 0.5, step=1)
        >>> backend.experiment
        [('loss', 0.5, 1)]
    """

    @functools.wraps(method)
    def initialize_then_call(backend: BaseVisBackend, *args: Any, **kwargs: Any) -> Any:
        if not is_main_process():
            return None
        if not backend._env_initialized:
            backend._init_env()
            backend._env_initialized = True
        return method(backend, *args, **kwargs)

    return initialize_then_call  # type: ignore[return-value]


class BaseVisBackend(metaclass=ABCMeta):
    """Base class of the backends a ``Visualizer`` forwards scalars, images and configs to.

    Subclasses implement ``_init_env`` (open the tracker's run) and ``experiment`` (the
    tracker's own object, for what the common API does not cover), and override the ``add_*``
    methods they support, decorated with :func:`force_init_env`. The defaults do nothing, so a
    tracker without images simply ignores ``add_image``.

    Steps: when the caller of ``Visualizer.add_scalars`` names the global training iteration
    (``global_step=``, as LoggerHook does), a backend whose ``step_axis`` is ``"global"`` (the
    default, every tracker) receives that iteration as its ``step``, with ``epoch`` among the
    scalars and as an ``epoch`` keyword; a backend whose ``step_axis`` is ``"caller"`` receives
    the caller's ``step`` and ``global_step`` as a keyword. A backend called directly simply
    writes at the ``step`` it is given.

    Args:
        save_dir: Where the backend writes its files, if it writes any.

    Example:
        >>> from treadle.visual import VISBACKENDS
        >>> backend = VISBACKENDS.build(dict(type='LocalVisBackend', save_dir='work/vis_data'))
    """

    step_axis: ClassVar[str] = GLOBAL_STEP_AXIS
    #: Whether the backend records numbers only: a Visualizer then leaves out of its calls the
    #: scalars that are not numbers (with a warning), which other backends (LocalVisBackend,
    #: and any backend of the user's, as in MMEngine) get as they are.
    numbers_only: ClassVar[bool] = False

    def __init__(self, save_dir: str | None) -> None:
        self._save_dir = save_dir
        self._env_initialized = False

    @property
    @abstractmethod
    def experiment(self) -> Any:
        """The tracker's own object (a SummaryWriter, a wandb run, ...)."""

    @abstractmethod
    def _init_env(self) -> Any:
        """Open the tracker: called once, before the first write, on the main process."""

    # The add_* methods and close are deliberately empty, not abstract (hence noqa B027): a
    # tracker that has no images simply does not override add_image.
    def add_config(self, config: Any, **kwargs: Any) -> None:  # noqa: B027
        """Record the config of the run (a treadle or MMEngine ``Config``, or a dict)."""

    def add_graph(  # noqa: B027
        self, model: Any, data_batch: Sequence[dict], **kwargs: Any
    ) -> None:
        """Record the graph of ``model`` run on ``data_batch``."""

    def add_image(  # noqa: B027
        self, name: str, image: Any, step: int = 0, **kwargs: Any
    ) -> None:
        """Record an RGB uint8 image of shape (H, W, 3) under ``name`` at ``step``."""

    def add_scalar(  # noqa: B027
        self, name: str, value: Any, step: int = 0, **kwargs: Any
    ) -> None:
        """Record one number under ``name`` at ``step``."""

    def add_scalars(  # noqa: B027
        self,
        scalar_dict: dict,
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Record several numbers at ``step``; ``file_path`` is for backends that write files."""

    def close(self) -> None:  # noqa: B027
        """Flush and close the tracker's run."""
