"""Fault injection for workers that torchrun starts (``python -m treadle.runner`` processes the
harness cannot fork itself): with this folder and tests/support on PYTHONPATH and
``TREADLE_FAULT_PLAN`` set, a worker installs the kill its plan names for its restart count and
rank (see fault_elastic.install_planned_kill). Other processes (torchrun's agent) load nothing.
"""

import os

if os.environ.get("TREADLE_FAULT_PLAN") and "RANK" in os.environ:
    import fault_elastic

    fault_elastic.install_planned_kill(os.environ["TREADLE_FAULT_PLAN"])
