_base_ = './level0.py'
model = dict(backbone=dict(depth=101), head=dict(num_classes=20))
optimizer = dict(lr=0.01)
work_dir = './work_dirs/level1'
