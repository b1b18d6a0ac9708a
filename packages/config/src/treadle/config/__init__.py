"""treadle.config: MMEngine-compatible configuration files (py, json, yaml) for any project."""

__version__ = "0.1.0"
