"""Functions a spawned or forkserver child runs (they must be importable there by module and
name)."""

import sys


def config_class_of_mmengine() -> str:
    from mmengine.config import Config

    return Config.__module__


def compat_installed() -> bool:
    """Whether the child has treadle.compat's import hook."""
    compat = sys.modules.get("treadle.compat")
    return compat is not None and compat.installed()
