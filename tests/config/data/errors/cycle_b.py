_base_ = './cycle_a.py'
b = 1
