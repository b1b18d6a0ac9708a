"""treadle.config: MMEngine-compatible configuration files (py, json, yaml) for any project.

The API follows MMEngine 0.10's ``mmengine.config``: ``from mmengine.config import Config``
becomes ``from treadle.config import Config``.
"""

from .cli_args import add_args
from .config import RESERVED_KEYS, Config
from .config_dict import ConfigDict
from .custom_imports import import_modules_from_strings
from .dict_action import DictAction
from .errors import (
    ConfigAttributeError,
    ConfigCycleError,
    ConfigError,
    ConfigFileNotFoundError,
    ConfigFormatError,
    ConfigImportError,
    ConfigIndexError,
    ConfigKeyError,
    ConfigNameError,
    ConfigParsingError,
    ConfigSyntaxError,
    ConfigTypeError,
    ConfigValueError,
    StrictModeError,
)
from .lazy import LazyAttr, LazyObject
from .read_base import read_base

__version__ = "0.1.1"

__all__ = [
    "RESERVED_KEYS",
    "Config",
    "ConfigAttributeError",
    "ConfigCycleError",
    "ConfigDict",
    "ConfigError",
    "ConfigFileNotFoundError",
    "ConfigFormatError",
    "ConfigImportError",
    "ConfigIndexError",
    "ConfigKeyError",
    "ConfigNameError",
    "ConfigParsingError",
    "ConfigSyntaxError",
    "ConfigTypeError",
    "ConfigValueError",
    "DictAction",
    "LazyAttr",
    "LazyObject",
    "StrictModeError",
    "__version__",
    "add_args",
    "import_modules_from_strings",
    "read_base",
]
