model = dict(
    type='Detector',
    backbone=dict(type='ResNet', depth=50, frozen_stages=1, out_indices=(0, 1, 2, 3)),
    neck=dict(type='FPN', in_channels=[256, 512, 1024, 2048], out_channels=256),
    head=dict(type='Head', num_classes=80, loss=dict(type='FocalLoss', gamma=2.0)),
)
optimizer = dict(type='SGD', lr=0.02, momentum=0.9, weight_decay=0.0001)
schedule = dict(max_epochs=12, milestones=[8, 11])
