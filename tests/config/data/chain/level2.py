_base_ = ['./level1.py', './extra.yaml']
model = dict(neck=dict(_delete_=True, type='PAFPN', out_channels=128))
data = dict(batch_size=8)
