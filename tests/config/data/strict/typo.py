_base_ = './base.py'
model = dict(
    backbone=dict(depht=101),
    head=dict(_delete_=True, anything=1),
)
optimiser = dict(lr=0.2)
