# a base that does not exist
_base_ = [
    './base_ok.py',
    './nope.py',
]
