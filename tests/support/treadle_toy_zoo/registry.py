"""The child registries of scope ``treadle_toy_zoo``."""

from treadle.registry import Registry
from treadle.runner.registry import DATASETS as ROOT_DATASETS
from treadle.runner.registry import FUNCTIONS as ROOT_FUNCTIONS
from treadle.runner.registry import INFERENCERS as ROOT_INFERENCERS
from treadle.runner.registry import MODELS as ROOT_MODELS

_LOCATIONS = ["treadle_toy_zoo.models"]

MODELS = Registry("model", parent=ROOT_MODELS, scope="treadle_toy_zoo", locations=_LOCATIONS)
DATASETS = Registry("dataset", parent=ROOT_DATASETS, scope="treadle_toy_zoo", locations=_LOCATIONS)
FUNCTIONS = Registry(
    "function", parent=ROOT_FUNCTIONS, scope="treadle_toy_zoo", locations=_LOCATIONS
)
INFERENCERS = Registry(
    "inferencer",
    parent=ROOT_INFERENCERS,
    scope="treadle_toy_zoo",
    locations=["treadle_toy_zoo.inferencer"],
)
