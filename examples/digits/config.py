# The README's main job: a small network on scikit-learn's bundled digits (no download),
# validation accuracy every epoch, checkpoints with the best one kept by accuracy, and a
# loss/accuracy curve PNG at the end. About a minute or less on 2 CPU cores.
#
#   treadle train examples/digits/config.py
#
# An MMEngine-style config: the same keys as MMEngine 0.10's Runner.

# The data set, network, metric and curve hook live beside this file; `treadle` puts this
# folder on sys.path before loading the config.
custom_imports = dict(imports=["digits_example"], allow_failed_imports=False)

work_dir = "./work_dirs/digits"
experiment_name = "digits"  # the run is digits_TIMESTAMP in logs and trackers

model = dict(type="DigitsMLP", hidden=128, dropout=0.1)

train_dataloader = dict(
    batch_size=32,
    num_workers=0,  # 1,437 images of 64 pixels: worker processes would cost more than they save
    sampler=dict(type="DefaultSampler", shuffle=True),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="Digits", split="train"),
)
val_dataloader = dict(
    batch_size=128,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="Digits", split="val"),
)
test_dataloader = val_dataloader

val_evaluator = dict(type="DigitsAccuracy")
test_evaluator = val_evaluator

max_epochs = 20
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=1)
val_cfg = dict()
test_cfg = dict()

optim_wrapper = dict(type="OptimWrapper", optimizer=dict(type="AdamW", lr=3e-3, weight_decay=1e-4))
param_scheduler = [
    dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=45),
    dict(type="CosineAnnealingLR", by_epoch=True, begin=1, end=max_epochs, T_max=max_epochs - 1),
]
# `treadle train ... --auto-scale-lr` scales lr by the real batch size over this one.
auto_scale_lr = dict(enable=False, base_batch_size=32)

default_hooks = dict(
    runtime_info=dict(type="RuntimeInfoHook"),
    timer=dict(type="IterTimerHook"),
    logger=dict(type="LoggerHook", interval=15),
    param_scheduler=dict(type="ParamSchedulerHook"),
    checkpoint=dict(
        type="CheckpointHook",
        interval=1,
        max_keep_ckpts=2,
        save_best="accuracy/top1",
        rule="greater",
    ),
    sampler_seed=dict(type="DistSamplerSeedHook"),
)
custom_hooks = [dict(type="CurvePlotHook", keys=["loss", "accuracy/top1"])]

visualizer = dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend")])
log_processor = dict(by_epoch=True, window_size=15)
randomness = dict(seed=0)
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend="gloo"))
log_level = "INFO"
load_from = None
resume = False
