"""``python -m treadle.compat SCRIPT [ARGS...]`` / ``python -m treadle.compat -m MODULE [ARGS...]``:
run MMEngine code with ``import mmengine`` resolved to treadle (also under ``torchrun``)."""

from __future__ import annotations

from .launcher import main

if __name__ == "__main__":
    raise SystemExit(main())
