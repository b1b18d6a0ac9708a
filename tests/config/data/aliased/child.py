_base_ = ['./base.py']

# Changes the loaders' pipelines through `_base_.x` (mmagic's restormer configs do this): the
# other keys of the base keep their values.
sigma = 15
test_loaders = _base_.test_loaders
for loader in test_loaders:
    pipeline = loader['dataset']['pipeline']
    pipeline[1]['params']['sigma'] = [sigma * 255, sigma * 255]

# A dict the child's code shares between two keys, changed through one of them.
shared = dict(lr=0.1)
optim_a = dict(opt=shared)
optim_b = dict(opt=shared)
optim_b['opt']['lr'] = 0.2
set_b = dict(dataset=dict(name='b2'))
