"""treadle.dist: distributed primitives that work the same with one process or thousands."""

__version__ = "0.1.0"
