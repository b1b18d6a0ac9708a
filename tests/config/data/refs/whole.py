_base_ = './base.py'
classes = {{_base_.num_classes}}
train = dict(dataset={{ _base_.dataset }}, sizes={{_base_.dataset.sizes}})
