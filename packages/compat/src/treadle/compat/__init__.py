"""treadle.compat: run code written for MMEngine on treadle, unchanged.

``python -m treadle.compat train.py ARGS`` (or ``-m MODULE``, or under ``torchrun``) runs a
script with every ``import mmengine`` / ``import mmengine.X.Y`` resolved to treadle's own
objects, at MMEngine 0.10.7's module paths; :func:`install` does the same from code. Nothing
happens at import time: the import hook exists only after the launcher or :func:`install`.

Example:
    >>> import treadle.compat
    >>> treadle.compat.install()
    >>> from mmengine.registry import MODELS
    >>> from treadle.runner.registry import MODELS as treadle_models
    >>> MODELS is treadle_models
    True
    >>> import mmengine
    >>> mmengine.__version__  # the MMEngine version whose API treadle follows
    '0.10.7'
"""

from __future__ import annotations

from .finder import CompatInstallError, MissingNameError, install, installed, uninstall

#: treadle-compat's own version (``mmengine.__version__`` is the MMEngine version it follows).
__version__ = "0.1.1"
#: The MMEngine version whose module paths and names treadle.compat provides.
MMENGINE_VERSION = "0.10.7"

__all__ = [
    "MMENGINE_VERSION",
    "CompatInstallError",
    "MissingNameError",
    "__version__",
    "install",
    "installed",
    "uninstall",
]
