_base_ = './base_ok.py'

w = 3
v = _base_.y.zz + 1
