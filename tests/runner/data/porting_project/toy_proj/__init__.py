"""A small MMEngine project: tests/runner/test_porting.py ports it to treadle and runs it."""

import mmengine
from mmengine.utils import digit_version

MMENGINE_MINIMUM = "0.7.0"
assert digit_version(mmengine.__version__) >= digit_version(MMENGINE_MINIMUM)
