from mmengine.config import read_base

with read_base():
    from .nope_base import *
