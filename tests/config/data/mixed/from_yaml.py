_base_ = ['../chain/extra.yaml', './other.json']
data = dict(workers=1)
runtime = dict(log_level='DEBUG')
