# A tiny RetinaNet for the downstream tests: mmdetection's RetinaNet with a thin ResNet-18, a
# 16-channel FPN and a one-conv head on 64x64 generated images with three box classes
# (tests/support/downstream_dense_data.py, COCO format under ./data). Inherits mmdetection's
# own runtime defaults through a package path, as its configs do. Its test-time NMS is mmcv's
# compiled op.
_base_ = ["mmdet::_base_/default_runtime.py"]

classes = ("red", "green", "blue")
model = dict(
    type="RetinaNet",
    data_preprocessor=dict(
        type="DetDataPreprocessor",
        mean=[127.5, 127.5, 127.5],
        std=[64.0, 64.0, 64.0],
        bgr_to_rgb=True,
        pad_size_divisor=32,
    ),
    backbone=dict(
        type="ResNet",
        depth=18,
        stem_channels=8,
        base_channels=8,
        num_stages=4,
        out_indices=(1, 2, 3),
        norm_cfg=dict(type="BN", requires_grad=True),
        style="pytorch",
    ),
    neck=dict(
        type="FPN",
        in_channels=[16, 32, 64],
        out_channels=16,
        start_level=0,
        add_extra_convs="on_input",
        num_outs=3,
    ),
    bbox_head=dict(
        type="RetinaHead",
        num_classes=len(classes),
        in_channels=16,
        stacked_convs=1,
        feat_channels=16,
        anchor_generator=dict(
            type="AnchorGenerator",
            octave_base_scale=2,
            scales_per_octave=2,
            ratios=[0.5, 1.0, 2.0],
            strides=[8, 16, 32],
        ),
        bbox_coder=dict(
            type="DeltaXYWHBBoxCoder",
            target_means=[0.0, 0.0, 0.0, 0.0],
            target_stds=[1.0, 1.0, 1.0, 1.0],
        ),
        loss_cls=dict(type="FocalLoss", use_sigmoid=True, gamma=2.0, alpha=0.25, loss_weight=1.0),
        loss_bbox=dict(type="L1Loss", loss_weight=1.0),
    ),
    train_cfg=dict(
        assigner=dict(
            type="MaxIoUAssigner",
            pos_iou_thr=0.5,
            neg_iou_thr=0.4,
            min_pos_iou=0,
            ignore_iof_thr=-1,
        ),
        sampler=dict(type="PseudoSampler"),
        allowed_border=-1,
        pos_weight=-1,
        debug=False,
    ),
    test_cfg=dict(
        nms_pre=100,
        min_bbox_size=0,
        # The scores start at the focal-loss prior (0.01): keep every box, so that the COCO
        # metrics have detections to score after a few iterations.
        score_thr=0.0,
        nms=dict(type="nms", iou_threshold=0.5),
        max_per_img=20,
    ),
)

train_pipeline = [
    dict(type="LoadImageFromFile"),
    dict(type="LoadAnnotations", with_bbox=True),
    # The generated images are 64x64 already: Resize only records the scale factor, which
    # mmdetection's heads read.
    dict(type="Resize", scale=(64, 64), keep_ratio=True),
    dict(type="RandomFlip", prob=0.5),
    dict(type="PackDetInputs"),
]
test_pipeline = [
    dict(type="LoadImageFromFile"),
    dict(type="Resize", scale=(64, 64), keep_ratio=True),
    dict(type="LoadAnnotations", with_bbox=True),
    dict(
        type="PackDetInputs",
        meta_keys=("img_id", "img_path", "ori_shape", "img_shape", "scale_factor"),
    ),
]
train_dataloader = dict(
    batch_size=2,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=True),
    batch_sampler=dict(type="AspectRatioBatchSampler"),
    dataset=dict(
        type="CocoDataset",
        metainfo=dict(classes=classes),
        data_root="data/",
        ann_file="train.json",
        data_prefix=dict(img="train/"),
        filter_cfg=dict(filter_empty_gt=True, min_size=0),
        pipeline=train_pipeline,
    ),
)
val_dataloader = dict(
    batch_size=2,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    dataset=dict(
        type="CocoDataset",
        metainfo=dict(classes=classes),
        data_root="data/",
        ann_file="val.json",
        data_prefix=dict(img="val/"),
        test_mode=True,
        pipeline=test_pipeline,
    ),
)
test_dataloader = val_dataloader
val_evaluator = dict(type="CocoMetric", ann_file="data/val.json", metric="bbox")
test_evaluator = val_evaluator

# Gradient clipping as mmdetection's RetinaNet configs have it.
optim_wrapper = dict(
    optimizer=dict(type="SGD", lr=0.01, momentum=0.9, weight_decay=1e-4),
    clip_grad=dict(max_norm=35, norm_type=2),
)
param_scheduler = [
    dict(type="LinearLR", start_factor=0.5, by_epoch=False, begin=0, end=4),
    dict(type="MultiStepLR", by_epoch=True, milestones=[2], gamma=0.1),
]
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=3, val_interval=1)
val_cfg = dict(type="ValLoop")
test_cfg = dict(type="TestLoop")

default_hooks = dict(
    logger=dict(type="LoggerHook", interval=1),
    checkpoint=dict(type="CheckpointHook", interval=1),
)
env_cfg = dict(dist_cfg=dict(backend="gloo"))
randomness = dict(seed=0, deterministic=False)
