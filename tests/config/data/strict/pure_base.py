model = dict(depth=50)
