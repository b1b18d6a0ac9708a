# A config with every kind of value.
model = dict(type='ResNet', depth=50, norm_cfg=dict(type='BN', requires_grad=True))
pipeline = [dict(type='Load'), dict(type='Resize', scale=(1333, 800), keep_ratio=True)]
lr = 0.02
steps = (8, 11)
flag = False
nothing = None
name = 'exp'
mapping = {'a-b': 1, 'c d': [1, 2.5, 'x'], '3': None}
_private = 7
__dunder = 'dropped'
