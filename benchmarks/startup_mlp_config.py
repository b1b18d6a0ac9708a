# The small training of benchmarks/runner_startup.py (launch to first step): an MLP on random
# data, validation with a metric every epoch, checkpoints, the default hooks. Its parts are in
# startup_mlp.py beside this file, registered for treadle or MMEngine.
custom_imports = dict(imports=["startup_mlp"], allow_failed_imports=False)

work_dir = "./work_dirs/startup_mlp"
model = dict(type="StartupMLP")
train_dataloader = dict(
    batch_size=32,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=True),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="StartupRandomSamples"),
)
val_dataloader = dict(
    batch_size=64,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="StartupRandomSamples"),
)
val_evaluator = dict(type="StartupAccuracy")
train_cfg = dict(by_epoch=True, max_epochs=2, val_interval=1)
val_cfg = dict()
optim_wrapper = dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.01))
default_hooks = dict(checkpoint=dict(type="CheckpointHook", interval=1))
visualizer = dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend")])
randomness = dict(seed=0)
env_cfg = dict(dist_cfg=dict(backend="gloo"))
