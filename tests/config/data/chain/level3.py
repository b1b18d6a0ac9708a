_base_ = './level2.py'
optimizer = dict(_delete_=True, type='AdamW', lr=1e-4)
schedule = dict(max_epochs=24)
work_dir = './work_dirs/level3'
