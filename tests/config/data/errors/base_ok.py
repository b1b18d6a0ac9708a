x = 1
y = dict(z=2)
