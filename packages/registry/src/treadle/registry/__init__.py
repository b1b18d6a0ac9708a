"""treadle.registry: registries that build objects from configs, with scopes and plugins."""

__version__ = "0.1.0"
