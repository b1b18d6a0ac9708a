from mmengine.config import read_base

with read_base():
    from .model import *

try:
    from surely_missing_pkg_x import Extra
except ImportError:
    Extra = None

if model["depth"] > 10:
    from surely_missing_pkg_x.heads import BigHead as Head
else:
    Head = None

model.head.type = Head
extra = dict(type=Extra)
