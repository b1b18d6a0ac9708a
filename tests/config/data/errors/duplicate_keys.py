_base_ = ['./base_ok.py', './base_dup.py']
