"""The errors of checkpoint loading that a user can meet and act on."""

from __future__ import annotations

import pickle


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint holds Python objects that ``weights_only`` loading refuses to build.

    A ``pickle.UnpicklingError`` (what ``torch.load`` raises there), so ported code that
    catches it still does. ``filename`` is the checkpoint and ``unsafe_globals`` the names of
    the classes and functions it would have to import.

    Example:
        >>> try:
        ...     load_checkpoint(model, 'mmdet_full.pth')
        ... except UnsafeCheckpointError as err:
        ...     print(err.unsafe_globals)
        ['mmengine.logging.history_buffer.HistoryBuffer']
    """

    def __init__(self, message: str, filename: str, unsafe_globals: list[str]) -> None:
        super().__init__(message)
        self.filename = filename
        self.unsafe_globals = unsafe_globals


class UnknownModelError(KeyError):
    """A model name (``torchvision://NAME``, ``open-mmlab://NAME``, ...) that no list knows.

    A KeyError, as MMEngine raises there, printed as written rather than quoted.

    Example:
        >>> try:
        ...     load_checkpoint(model, 'torchvision://resnet5')
        ... except UnknownModelError as err:
        ...     print(err)  # names the closest known names
    """

    __str__ = BaseException.__str__


class MissingPrefixError(ValueError, AssertionError):
    """A prefix (a submodule's name) under which a checkpoint holds no weights: a ValueError,
    and the AssertionError MMEngine raises for it.

    Example:
        >>> try:
        ...     _load_checkpoint_with_prefix('backbone', 'head_only.pth')
        ... except AssertionError as err:
        ...     print(err)  # names the checkpoint's top-level names
    """
