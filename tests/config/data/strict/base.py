model = dict(backbone=dict(depth=50), head=dict(num_classes=80))
optimizer = dict(lr=0.1)
