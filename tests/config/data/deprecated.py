_deprecation_ = dict(expected='simple.py', reference='https://example.org/why')
value = 1
