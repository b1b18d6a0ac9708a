_base_ = './cycle_b.py'
a = 1
