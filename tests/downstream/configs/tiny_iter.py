# tiny_cls.py trained by iteration: IterBasedTrainLoop over an InfiniteSampler, 12 iterations,
# validation and a checkpoint every 6, schedulers counted in iterations.
_base_ = ["./tiny_cls.py"]

train_cfg = dict(_delete_=True, type="IterBasedTrainLoop", max_iters=12, val_interval=6)
train_dataloader = dict(sampler=dict(type="InfiniteSampler", shuffle=True))
default_hooks = dict(checkpoint=dict(interval=6, by_epoch=False))
log_processor = dict(by_epoch=False)
param_scheduler = [
    dict(type="LinearLR", start_factor=0.5, by_epoch=False, begin=0, end=6),
    dict(type="MultiStepLR", by_epoch=False, milestones=[9], gamma=0.1),
]
