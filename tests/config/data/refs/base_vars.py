_base_ = './base.py'
# base values used in expressions, nested, and changed after they are read
classes = _base_.num_classes + 20
val = dict(dataset=_base_.dataset, batch=2)
sizes = _base_.dataset.sizes + [960]
dataset = _base_.dataset
dataset.root = '/data/other'
half = [s // 2 for s in _base_.dataset.sizes]
