# One pipeline list shared by two loaders, each loader also a key of its own: every load
# (MMEngine's and treadle's) gives each path its own copy of what it shares.
test_pipeline = [dict(type='Load'), dict(type='Noise', params=dict(sigma=[1, 1]))]
set_a = dict(type='Loader', dataset=dict(name='a', pipeline=test_pipeline))
set_b = dict(type='Loader', dataset=dict(name='b', pipeline=test_pipeline))
test_loaders = [set_a, set_b]
