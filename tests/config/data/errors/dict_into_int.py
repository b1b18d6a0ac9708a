_base_ = './base_ok.py'
x = dict(a=1)
