# A script kept among configs, as xtuner's convert_xtuner_weights_to_llava.py: its optional
# package is imported inside try/except ImportError, which must not fail the load.
import argparse

import lazypkg_demo.models

try:
    from surely_missing_pkg_x.models import BigNet, make_net
    import surely_missing_pkg_x.utils as missing_utils
except ImportError:
    raise ImportError("Please install surely_missing_pkg_x")

try:
    import surely_missing_pkg_y
    HAS_Y = True
except ImportError:  # a plain `import x` inside a block runs, as in MMEngine
    HAS_Y = False


def build():
    from surely_missing_pkg_z import Helper

    return dict(type=Helper)


model = dict(type=BigNet, factory=make_net, utils=missing_utils.load)
net = dict(type=lazypkg_demo.models.TinyNet)
helper = build()
del build  # a function would be a key (compared by identity in the parity test)
