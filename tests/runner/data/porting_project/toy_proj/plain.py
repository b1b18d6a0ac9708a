"""No MMEngine import here: porting leaves the file untouched."""

import os

HOME = os.environ.get("HOME", "")
