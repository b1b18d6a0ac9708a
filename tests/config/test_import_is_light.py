"""treadle.config serves projects without training: importing it never pulls torch or numpy."""

import subprocess
import sys


def test_import_pulls_neither_torch_nor_numpy():
    probe = "import sys, treadle.config; print(sorted({'torch', 'numpy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
