_base_ = './deprecated.py'
other = 2
