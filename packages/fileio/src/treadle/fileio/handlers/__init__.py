"""File formats of load and dump: json, yaml and pickle, and the ones users register."""

from .base import BaseFileHandler
from .json_handler import JsonHandler
from .pickle_handler import PickleHandler
from .registry_utils import file_handlers, register_handler
from .yaml_handler import YamlHandler

__all__ = [
    "BaseFileHandler",
    "JsonHandler",
    "PickleHandler",
    "YamlHandler",
    "file_handlers",
    "register_handler",
]
