"""``python -m treadle.runner COMMAND``: the same as the ``treadle`` command."""

from __future__ import annotations

import sys

from treadle.runner.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
