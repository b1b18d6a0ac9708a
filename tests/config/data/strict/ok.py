_base_ = './base.py'
model = dict(backbone=dict(depth=101))
