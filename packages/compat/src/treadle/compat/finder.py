"""The import hook: ``mmengine`` and each of its modules, made of treadle's own objects.

A meta path finder placed first on ``sys.meta_path`` answers every ``mmengine`` / ``mmengine.X``
import with a :class:`CompatModule` whose attributes are looked up in treadle on first use
(:mod:`treadle.compat.resolve`). It wins over a real MMEngine installed next to treadle, and it
exists only after :func:`install`: importing treadle.compat changes nothing.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
import types
from pathlib import Path
from typing import Any

from .children import hook_children
from .mmengine_0_10_7 import MODULES
from .patching import NOT_FOUND, forward_restore, forward_set
from .paths import NAMES
from .resolve import COVERAGE_HINT, MissingNameError, public_names, resolve

_ORIGIN = str(Path(__file__).with_name("__init__.py"))
_lock = threading.Lock()


class CompatInstallError(RuntimeError):
    """:func:`install` found modules of the real MMEngine already imported in this process."""


class CompatModule(types.ModuleType):
    """An MMEngine module path whose names are treadle's objects, looked up on first use.

    Example:
        >>> import treadle.compat
        >>> treadle.compat.install()
        >>> import mmengine.dist.utils
        >>> type(mmengine.dist.utils).__name__
        'CompatModule'
        >>> mmengine.dist.utils.get_rank()
        0
    """

    def __getattr__(self, name: str) -> Any:
        if name == "__all__":
            value: Any = public_names(self.__name__, provided_only=True)
        elif name.startswith("__") and name.endswith("__"):
            # __file__, __wrapped__, ...: what a real module without them answers.
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        else:
            value = resolve(self.__name__, name)
        self.__dict__[name] = value  # looked up once
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # The import system binds a submodule on its package once imported; where MMEngine's
        # package binds a function of the same name over it (mmengine.utils.dl_utils's
        # collect_env), the function stays, as there.
        if isinstance(value, CompatModule):
            if (self.__name__, name) in NAMES:
                return
        elif not name.startswith("__"):
            # mock.patch / monkeypatch at an MMEngine path: treadle's code behind it sees it.
            forward_set(self.__name__, name, value, self.__dict__.get(name, NOT_FOUND))
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("__"):
            forward_restore(self.__name__, name)
        super().__delattr__(name)

    def __dir__(self) -> list[str]:
        return sorted(set(self.__dict__) | set(public_names(self.__name__, provided_only=True)))


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> CompatModule:
        return CompatModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ in ("mmengine", "mmengine.version"):
            from .versions import mmengine_version_names

            module.__dict__.update(mmengine_version_names())


class _Finder(importlib.abc.MetaPathFinder):
    """Answers ``mmengine`` and the modules of MMEngine 0.10.7; other names pass by."""

    loader = _Loader()

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "mmengine" and not fullname.startswith("mmengine."):
            return None
        entry = MODULES.get(fullname)
        if entry is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: MMEngine 0.10.7 has no such module, so "
                f"treadle.compat has none either. {COVERAGE_HINT}",
                name=fullname,
            )
        spec = importlib.machinery.ModuleSpec(
            fullname, self.loader, origin=_ORIGIN, is_package=entry[0]
        )
        # Code that locates the package (os.path.dirname(mmengine.__file__)) finds treadle.compat,
        # which provides it. A package's __path__ stays empty: pkgutil finds no stray files in it.
        spec.has_location = True
        return spec

    def __repr__(self) -> str:
        return "<treadle.compat MMEngine finder>"


_FINDER = _Finder()


def installed() -> bool:
    """Whether :func:`install` is in effect in this process.

    Example:
        >>> import treadle.compat
        >>> treadle.compat.install()
        >>> treadle.compat.installed()
        True
    """
    return _FINDER in sys.meta_path


def _real_mmengine_modules() -> list[str]:
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if (name == "mmengine" or name.startswith("mmengine."))
        and module is not None
        and not isinstance(module, CompatModule)
    )


def _alias_mmengine_scope(on: bool) -> None:
    # MMEngine code names its root registries' scope 'mmengine' (default_scope = 'mmengine',
    # type='mmengine.Name'); here those registries are treadle's, of scope 'treadle'.
    from treadle.registry.registry import SCOPE_ALIASES
    from treadle.runner.registry import MODELS

    if on:
        SCOPE_ALIASES["mmengine"] = MODELS.scope
    else:
        SCOPE_ALIASES.pop("mmengine", None)


def _mmengine_scalars_file(on: bool) -> None:
    # Toolbox scripts (log analysis, plotting) read scalars.json: keep MMEngine's keys there,
    # without the training iteration treadle adds to validation lines, and each call's line
    # in the file when the call returns (MMEngine appends it; treadle buffers for 2 s).
    from treadle.visual.backends import LocalVisBackend

    LocalVisBackend.write_iteration = not on
    LocalVisBackend.write_through = on


def _mmengine_visual_checks(on: bool) -> None:
    # treadle.visual accepts a few inputs MMEngine refuses (nested lists as coordinates, numpy
    # feature maps, flipped boxes drawn with a warning); MMEngine code's tests expect refusals.
    from treadle.visual.mmengine_checks import MMEngineChecks

    MMEngineChecks.enabled = on


def _mmengine_wandb_calls(on: bool) -> None:
    # MMEngine declares no step metric and logs through the module-level wandb.log and
    # wandb.define_metric; downstream tests mock the wandb module and assert on those calls.
    from treadle.visual.backends.wandb_backend import WandbVisBackend

    WandbVisBackend.step_metric = not on


def _mmengine_checkpoint_pointer(on: bool) -> None:
    # MMEngine's last_checkpoint holds the checkpoint's full path, and toolbox scripts open
    # what it names from wherever they run; treadle's names it relative to the work dir.
    from treadle.runner.checkpoint.pointer import PointerStyle

    PointerStyle.full_path = on


def _mmengine_lmdb_bytes_only(on: bool) -> None:
    # MMEngine's LmdbBackend reads bytes only (its values are encoded images) and raises
    # NotImplementedError from get_text; treadle's decodes the value.
    from treadle.fileio import LmdbBackend

    LmdbBackend.text_reads = not on


def _mmengine_names_and_text(on: bool) -> None:
    # MMEngine's names and text where its users read them: the default logger and message hub
    # are 'mmengine' (toolbox tests match 'INFO:mmengine:...'), log lines, levels and per-rank
    # files are MMEngine's, progress bars write its text, a missing prerequisite is printed
    # before the error, and collect_env reports its keys.
    from treadle.logging import Logger, MessageHub
    from treadle.runner.utils import ProgressBar, mmengine_env, prerequisites

    from .versions import mmengine_version_names

    name = "mmengine" if on else "treadle"
    Logger.default_instance_name = Logger.default_logger_name = name
    MessageHub.default_instance_name = name
    Logger.mmengine_style = on
    ProgressBar.mmengine_format = on
    prerequisites.PRINT_MISSING = on
    mmengine_env.MMENGINE_VERSION = mmengine_version_names()["__version__"] if on else None


def install() -> None:
    """Resolve ``import mmengine`` and ``import mmengine.X.Y`` to treadle from now on, in this
    process. Calling it again does nothing.

    Raises CompatInstallError when modules of the real MMEngine were imported already: two
    engines in one process would each have their own registries, managers and message hub.

    Example:
        >>> import treadle.compat
        >>> treadle.compat.install()
        >>> from mmengine.config import Config
        >>> Config.__module__
        'treadle.config.config'
    """
    with _lock:
        if installed():
            return
        real = _real_mmengine_modules()
        if real:
            shown = ", ".join(real[:8]) + (f" and {len(real) - 8} more" if len(real) > 8 else "")
            raise CompatInstallError(
                f"treadle.compat.install() was called after the real MMEngine was imported "
                f"({shown}): two engines in one process would split the registries, managers and "
                f"message hub. Call install() before anything imports mmengine, or start the "
                f"program with `python -m treadle.compat SCRIPT`."
            )
        sys.meta_path.insert(0, _FINDER)
        _alias_mmengine_scope(True)
        _mmengine_names_and_text(True)
        _mmengine_scalars_file(True)
        _mmengine_visual_checks(True)
        _mmengine_wandb_calls(True)
        _mmengine_checkpoint_pointer(True)
        _mmengine_lmdb_bytes_only(True)
        hook_children(True)


def uninstall() -> None:
    """Undo :func:`install`: remove the import hook and the ``mmengine`` modules it made (code
    that kept references to them keeps working; new imports of mmengine find the real one, if
    any).

    Example:
        >>> import treadle.compat
        >>> treadle.compat.install()
        >>> treadle.compat.uninstall()
        >>> treadle.compat.installed()
        False
    """
    with _lock:
        while _FINDER in sys.meta_path:
            sys.meta_path.remove(_FINDER)
        _alias_mmengine_scope(False)
        _mmengine_names_and_text(False)
        _mmengine_scalars_file(False)
        _mmengine_visual_checks(False)
        _mmengine_wandb_calls(False)
        _mmengine_checkpoint_pointer(False)
        _mmengine_lmdb_bytes_only(False)
        hook_children(False)
        for name, module in list(sys.modules.items()):
            if isinstance(module, CompatModule):
                del sys.modules[name]


__all__ = ["CompatInstallError", "CompatModule", "MissingNameError", "install", "installed"]
