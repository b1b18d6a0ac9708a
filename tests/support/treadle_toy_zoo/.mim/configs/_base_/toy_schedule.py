default_scope = "treadle_toy_zoo"
train_dataloader = dict(
    dataset=dict(type="ToyZooDataset", length=12),
    sampler=dict(type="DefaultSampler", shuffle=False),
    batch_size=3,
    num_workers=0,
)
optim_wrapper = dict(optimizer=dict(type="SGD", lr=0.1))
train_cfg = dict(by_epoch=True, max_epochs=2)
default_hooks = dict(checkpoint=dict(type="CheckpointHook", interval=2))
