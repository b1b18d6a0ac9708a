# A tiny image classifier for the downstream tests: mmpretrain's ImageClassifier with a thin
# ResNet-18 on 16x16 generated images (tests/support/downstream_images.py), three classes,
# data under ./data (the test runs tools/train.py in the folder holding it).
# Inherits mmpretrain's own runtime defaults through a package path, as its configs do.
_base_ = ["mmpretrain::_base_/default_runtime.py"]

model = dict(
    type="ImageClassifier",
    backbone=dict(
        type="ResNet",
        depth=18,
        stem_channels=8,
        base_channels=8,
        num_stages=4,
        out_indices=(3,),
        style="pytorch",
    ),
    neck=dict(type="GlobalAveragePooling"),
    head=dict(
        type="LinearClsHead",
        num_classes=3,
        in_channels=64,
        loss=dict(type="CrossEntropyLoss", loss_weight=1.0),
        topk=(1,),
    ),
)

data_preprocessor = dict(
    num_classes=3, mean=[127.5, 127.5, 127.5], std=[64.0, 64.0, 64.0], to_rgb=True
)

train_pipeline = [
    dict(type="LoadImageFromFile"),
    dict(type="RandomFlip", prob=0.5, direction="horizontal"),
    dict(type="PackInputs"),
]
test_pipeline = [
    dict(type="LoadImageFromFile"),
    dict(type="PackInputs"),
]

train_dataloader = dict(
    batch_size=4,
    num_workers=2,
    persistent_workers=True,
    dataset=dict(
        type="CustomDataset", data_root="data", data_prefix="train", pipeline=train_pipeline
    ),
    sampler=dict(type="DefaultSampler", shuffle=True),
)
val_dataloader = dict(
    batch_size=4,
    num_workers=0,
    # tools/train.py turns persistent workers on by default, which needs workers.
    persistent_workers=False,
    dataset=dict(type="CustomDataset", data_root="data", data_prefix="val", pipeline=test_pipeline),
    sampler=dict(type="DefaultSampler", shuffle=False),
)
val_evaluator = dict(type="Accuracy", topk=(1,))
test_dataloader = val_dataloader
test_evaluator = val_evaluator

optim_wrapper = dict(optimizer=dict(type="SGD", lr=0.05, momentum=0.9, weight_decay=1e-4))
param_scheduler = [
    dict(type="LinearLR", start_factor=0.5, by_epoch=True, begin=0, end=1),
    dict(type="MultiStepLR", by_epoch=True, milestones=[3], gamma=0.1),
]
train_cfg = dict(by_epoch=True, max_epochs=4, val_interval=1)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=4)

default_hooks = dict(
    logger=dict(type="LoggerHook", interval=1),
    checkpoint=dict(type="CheckpointHook", interval=1, max_keep_ckpts=3),
)
env_cfg = dict(dist_cfg=dict(backend="gloo"))
randomness = dict(seed=0, deterministic=False)
