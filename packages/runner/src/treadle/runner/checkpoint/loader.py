"""CheckpointLoader: which loader reads a checkpoint, chosen by the prefix of its name.

The built-in schemes (local paths and every treadle.fileio backend, ``http(s)://``, ``s3://``,
``torchvision://``, ``open-mmlab://``, ``mmcls://``, ``pkg::``) register themselves in
:mod:`treadle.runner.checkpoint.schemes`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from treadle.logging import print_log

Loader = Callable[..., Any]


def _parameters(loader: Loader) -> Any:
    try:
        return inspect.signature(loader).parameters
    except (TypeError, ValueError):
        return {}


def _accepts_weights_only(loader: Loader) -> bool:
    parameters = _parameters(loader)
    return "weights_only" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _accepts_backend_args(loader: Loader) -> bool:
    # Named only: a loader passing **kwargs on to torch.load must not be given them.
    return "backend_args" in _parameters(loader)


class CheckpointLoader:
    """Loaders of checkpoints by the prefix of their path (a regular expression matched at the
    start: ``r'(\\S+\\:)?s3://'``); the longest matching prefix wins, and ``''`` (local paths
    and treadle.fileio URIs) matches everything.

    A loader is called as ``loader(filename, map_location)``, plus ``weights_only=...`` when it
    takes that argument, and ``backend_args=...`` (the store's endpoint and credentials) when
    they are given and it names that argument.

    Example:
        >>> @CheckpointLoader.register_scheme(prefixes='zoo://')
        ... def load_from_zoo(filename, map_location=None):
        ...     return torch.load(f'/models/{filename[6:]}.pth', map_location=map_location)
        >>> checkpoint = CheckpointLoader.load_checkpoint('zoo://resnet')
    """

    _schemes: ClassVar[dict[str, Loader]] = {}

    @classmethod
    def _register_scheme(
        cls, prefixes: str | Sequence[str], loader: Loader, force: bool = False
    ) -> None:
        if isinstance(prefixes, str):
            prefixes = [prefixes]
        elif not isinstance(prefixes, (list, tuple)) or not all(
            isinstance(prefix, str) for prefix in prefixes
        ):
            raise TypeError(
                f"register_scheme: prefixes must be a str or a list/tuple of str, got {prefixes!r}"
            )
        if not callable(loader):
            raise TypeError(f"register_scheme: the loader must be callable, got {loader!r}")
        for prefix in prefixes:
            if prefix in cls._schemes and not force:
                raise KeyError(
                    f"{prefix!r} is already registered as a checkpoint scheme (loader "
                    f"{getattr(cls._schemes[prefix], '__name__', cls._schemes[prefix])}); "
                    "pass force=True to replace it"
                )
        for prefix in prefixes:
            cls._schemes[prefix] = loader
        cls._schemes = dict(sorted(cls._schemes.items(), key=lambda item: -len(item[0])))

    @classmethod
    def register_scheme(
        cls,
        prefixes: str | Sequence[str],
        loader: Loader | None = None,
        force: bool = False,
    ) -> Callable[[Loader], Loader] | None:
        """Register ``loader`` for paths starting with ``prefixes``; without ``loader``, a
        decorator."""
        if loader is not None:
            cls._register_scheme(prefixes, loader, force=force)
            return None

        def register(function: Loader) -> Loader:
            cls._register_scheme(prefixes, function, force=force)
            return function

        return register

    @classmethod
    def _get_checkpoint_loader(cls, path: str) -> Loader:
        for prefix, loader in cls._schemes.items():
            if re.match(prefix, path) is not None:
                return loader
        raise ValueError(
            f"no checkpoint loader serves {path!r}: the registered schemes are "
            f"{', '.join(repr(p) for p in cls._schemes)}"
        )

    @classmethod
    def load_checkpoint(
        cls,
        filename: str,
        map_location: Any = None,
        logger: Any = "current",
        weights_only: bool = True,
        *,
        backend_args: dict | None = None,
    ) -> Any:
        """Load the checkpoint ``filename`` with the loader its prefix selects.

        ``weights_only=True`` (the default) loads tensors and plain containers only, never
        running code named by the file; pass False for a legacy checkpoint you trust.
        ``backend_args`` describe the store of a treadle.fileio URL (``s3://...``: endpoint,
        credentials); the loaders of other schemes (``http(s)://``, model zoos) ignore them.
        """
        filename = str(filename)
        loader = cls._get_checkpoint_loader(filename)
        print_log(
            f"Loads checkpoint by {_scheme_name(loader, filename)} backend from path: {filename}",
            logger=logger,
        )
        extra: dict[str, Any] = {}
        if _accepts_weights_only(loader):
            extra["weights_only"] = weights_only
        if backend_args is not None and _accepts_backend_args(loader):
            extra["backend_args"] = backend_args
        return loader(filename, map_location, **extra)


def _scheme_name(loader: Loader, filename: str) -> str:
    name = getattr(loader, "__name__", type(loader).__name__)
    name = name.removeprefix("load_from_")
    # The catch-all loader reads local paths itself and hands URIs to treadle.fileio.
    if name == "local" and "://" in filename:
        return "fileio"
    return name


def _load_checkpoint(
    filename: str,
    map_location: Any = None,
    logger: Any = None,
    weights_only: bool = True,
    *,
    backend_args: dict | None = None,
) -> Any:
    """Load a checkpoint from a local path, a URL or any registered scheme, whole (no model
    involved); ``logger`` None logs to the current logger; ``backend_args`` describe the store
    of a treadle.fileio URL."""
    return CheckpointLoader.load_checkpoint(
        filename,
        map_location,
        "current" if logger is None else logger,
        weights_only,
        backend_args=backend_args,
    )
