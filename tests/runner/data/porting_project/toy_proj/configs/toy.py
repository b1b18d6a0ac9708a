from mmengine.config import read_base

with read_base():
    from .base import *  # noqa: F403

model = dict(type="ToyModel", width=3)
