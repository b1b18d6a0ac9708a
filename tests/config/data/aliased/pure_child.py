from mmengine.config import read_base

with read_base():
    from .base import *
    from .base import set_a as first_set

# The base's loaders changed through ConfigDict views: the other keys keep their values.
for loader in test_loaders:
    loader.dataset.pipeline[1].params.sigma = [3, 3]
first_set.dataset.name = 'first'
test_loaders.append(dict(type='Loader', dataset=set_a.dataset))
