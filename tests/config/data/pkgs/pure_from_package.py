from treadle.config import read_base

with read_base():
    from cfgpkg_demo.configs.pure.base import *

model.depth = 101
