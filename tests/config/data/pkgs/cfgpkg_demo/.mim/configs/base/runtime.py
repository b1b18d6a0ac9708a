log_level = 'INFO'
default_hooks = dict(logger=dict(type='LoggerHook', interval=50))
