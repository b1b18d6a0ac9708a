from mmengine.config import read_base

with read_base():
    from .model import *
    from .schedule import optim_wrapper, train_cfg as base_train_cfg

import lazypkg_demo.models as models
from lazypkg_demo.models import make_optimizer as make_opt

model.depth = 50
model.head.update(dict(num_classes=100))
optim_wrapper.optimizer.lr = 0.01
train_cfg = dict(base_train_cfg, max_epochs=24)
builder = dict(type=models.TinyNet, factory=make_opt)
