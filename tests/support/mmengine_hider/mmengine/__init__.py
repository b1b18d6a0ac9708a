"""Put first on PYTHONPATH of the treadle runs of the downstream tests: the real MMEngine is
installed in that environment (for the reference run), and this makes any import of it that
bypasses treadle.compat fail loudly instead of silently mixing two engines."""

raise ImportError(
    "the real mmengine package was imported during a treadle run: treadle.compat should have "
    "answered this import (tests/support/mmengine_hider)"
)
