_base_ = './base_ok.py'

v = {{_base_.y.zz}}
