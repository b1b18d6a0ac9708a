# tiny_seg.py with dropout before the classifier (mmsegmentation's default ratio), 16
# iterations, validation after 8: where treadle's losses part from MMEngine's after a
# validation (test_downstream_mmseg.py; runner README, "Differences from MMEngine").
_base_ = ["./tiny_seg.py"]

model = dict(decode_head=dict(dropout_ratio=0.1))
train_cfg = dict(max_iters=16, val_interval=8)
default_hooks = dict(checkpoint=dict(interval=16))
