# A base of pure-Python configs: plain values, no imports needed.
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9))
train_cfg = dict(max_epochs=12, val_interval=1)
