model = dict(type='Net', depth=34)
