a = 1
b = dict(x=1,
c = 3
