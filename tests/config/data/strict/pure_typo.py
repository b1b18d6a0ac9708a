from treadle.config import read_base

with read_base():
    from .pure_base import *

model.depth = 101
modle = dict(depth=1)
