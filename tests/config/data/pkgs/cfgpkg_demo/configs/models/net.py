model = dict(type='Net', depth=18)
