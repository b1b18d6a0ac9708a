"""A registered toy model, with the imports MMEngine projects write."""

import os.path as osp

import mmengine.dist as dist
import torch
from mmengine import Config, print_log
from mmengine.logging import MMLogger  # the logger
from mmengine.model import (
    BaseModel,  # the base of every model
    is_model_wrapper,
)
from mmengine.model import BaseModule as Module
from mmengine.registry import MODELS
from mmengine.utils import ManagerMixin, is_list_of

SCOPE = "from mmengine import not_an_import"  # a string: left alone


@MODELS.register_module()
class ToyModel(BaseModel):
    def __init__(self, width: int = 2) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width, 1)
        self.head = Module()

    def forward(self, inputs, data_samples=None, mode="tensor"):
        return self.linear(inputs)


class Tracker(ManagerMixin):
    pass


def build(cfg: dict) -> ToyModel:
    from mmengine.registry import build_from_cfg

    print_log(f"building in {osp.basename(__file__)} on rank {dist.get_rank()}")
    assert is_list_of([1, 2], int)
    return build_from_cfg(Config(cfg).model, MODELS)


def logger_name() -> str:
    return MMLogger.get_current_instance().instance_name


def unwrap(model):
    return model.module if is_model_wrapper(model) else model


def runner_config() -> dict:
    return dict(default_scope="mmengine", model=dict(type="ToyModel"), name="mmengine")
