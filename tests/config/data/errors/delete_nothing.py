_base_ = './base_ok.py'
new = dict(_delete_=True, a=1)
