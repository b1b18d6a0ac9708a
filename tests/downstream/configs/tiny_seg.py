# A tiny FCN for the downstream tests: mmsegmentation's EncoderDecoder with a thin dilated
# ResNet-18 (ResNetV1c) and a one-conv FCNHead on 32x32 generated images with background and
# three rectangle classes (tests/support/downstream_dense_data.py, mmsegmentation's folder
# layout under ./data). Trained by iteration, as mmsegmentation's schedules are; inherits its
# runtime defaults through a package path, as its configs do.
_base_ = ["mmseg::_base_/default_runtime.py"]

classes = ("background", "red", "green", "blue")
palette = [[0, 0, 0], [255, 0, 0], [0, 255, 0], [0, 0, 255]]
norm_cfg = dict(type="BN", requires_grad=True)
model = dict(
    type="EncoderDecoder",
    data_preprocessor=dict(
        type="SegDataPreProcessor",
        mean=[127.5, 127.5, 127.5],
        std=[64.0, 64.0, 64.0],
        bgr_to_rgb=True,
        pad_val=0,
        seg_pad_val=255,
        size=(32, 32),
    ),
    backbone=dict(
        type="ResNetV1c",
        depth=18,
        stem_channels=8,
        base_channels=8,
        num_stages=4,
        out_indices=(3,),
        dilations=(1, 1, 2, 4),
        strides=(1, 2, 1, 1),
        norm_cfg=norm_cfg,
        norm_eval=False,
        style="pytorch",
        contract_dilation=True,
    ),
    decode_head=dict(
        type="FCNHead",
        in_channels=64,
        in_index=0,
        channels=16,
        num_convs=1,
        concat_input=False,
        # No dropout: treadle's validation draws nothing from training's generators (runner
        # README, "Differences from MMEngine"), MMEngine's draws a seed from torch's for the val
        # DataLoader, so dropout masks after a validation differ (tiny_seg_dropout.py shows it).
        dropout_ratio=0.0,
        num_classes=len(classes),
        norm_cfg=norm_cfg,
        align_corners=False,
        loss_decode=dict(type="CrossEntropyLoss", use_sigmoid=False, loss_weight=1.0),
    ),
    train_cfg=dict(),
    test_cfg=dict(mode="whole"),
)

train_pipeline = [
    dict(type="LoadImageFromFile"),
    dict(type="LoadAnnotations"),
    dict(type="RandomFlip", prob=0.5),
    dict(type="PackSegInputs"),
]
test_pipeline = [
    dict(type="LoadImageFromFile"),
    dict(type="LoadAnnotations"),
    dict(type="PackSegInputs"),
]
dataset = dict(
    type="BaseSegDataset",
    metainfo=dict(classes=classes, palette=palette),
    data_root="data",
    img_suffix=".png",
    seg_map_suffix=".png",
)
train_dataloader = dict(
    batch_size=4,
    num_workers=0,
    sampler=dict(type="InfiniteSampler", shuffle=True),
    dataset=dict(
        dataset,
        data_prefix=dict(img_path="img_dir/train", seg_map_path="ann_dir/train"),
        pipeline=train_pipeline,
    ),
)
val_dataloader = dict(
    batch_size=1,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    dataset=dict(
        dataset,
        data_prefix=dict(img_path="img_dir/val", seg_map_path="ann_dir/val"),
        pipeline=test_pipeline,
    ),
)
test_dataloader = val_dataloader
val_evaluator = dict(type="IoUMetric", iou_metrics=["mIoU"])
test_evaluator = val_evaluator

optim_wrapper = dict(
    type="OptimWrapper", optimizer=dict(type="SGD", lr=0.2, momentum=0.9, weight_decay=5e-4)
)
param_scheduler = [dict(type="PolyLR", eta_min=1e-4, power=0.9, begin=0, end=36, by_epoch=False)]
# 36 iterations: the first dozen predict background only; mIoU moves after that.
train_cfg = dict(type="IterBasedTrainLoop", max_iters=36, val_interval=12)
val_cfg = dict(type="ValLoop")
test_cfg = dict(type="TestLoop")
default_hooks = dict(
    timer=dict(type="IterTimerHook"),
    logger=dict(type="LoggerHook", interval=1, log_metric_by_epoch=False),
    param_scheduler=dict(type="ParamSchedulerHook"),
    checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=12),
    sampler_seed=dict(type="DistSamplerSeedHook"),
    visualization=dict(type="SegVisualizationHook"),
)
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend="gloo"))
randomness = dict(seed=0, deterministic=False)
