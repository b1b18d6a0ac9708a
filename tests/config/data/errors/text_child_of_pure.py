_base_ = './lazy_base.py'
