"""A loaded config's values, kept as its files' code left them until they are needed.

``Config.fromfile`` gives a ``Config`` holding the values as the code of its files left them
(``_raw``: plain dicts and lists, one object possibly under several keys; nothing here changes
them). ``to_dict``, ``pretty_text`` and ``dump`` copy them as they are; anything else that needs
them as a ``ConfigDict`` (``cfg.model``, ``cfg['model']``, iteration, a change, a copy, a
pickle) first makes ``_cfg_dict`` of them: one deep copy (fast_copy.py) whose dicts become
``ConfigDict`` when read (``config_dict.wrap``). So ``Config.fromfile(path).to_dict()`` copies
the values once, and what users see is what a ``ConfigDict`` made on loading would show.
"""

from __future__ import annotations

from .config_dict import ConfigDict, wrap
from .errors import ConfigKeyError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from typing_extensions import Self

RESERVED_KEYS = ("filename", "text", "pretty_text", "env_variables")


class LoadedValues:
    """The part of ``Config`` that makes a loaded config's ``ConfigDict`` when first needed.

    Example:
        >>> from treadle.config import Config
        >>> cfg = Config.fromstring("model = dict(depth=1)", ".py")
        >>> '_cfg_dict' in vars(cfg), cfg.to_dict(), '_cfg_dict' in vars(cfg)
        (False, {'model': {'depth': 1}}, False)
        >>> cfg.model.depth, '_cfg_dict' in vars(cfg)
        (1, True)
    """

    @classmethod
    def _of_loaded(
        cls,
        loaded: Any,
        filename: str | None,
        format_python_code: bool = True,
        env_variables: dict[str, Any] | None = None,
    ) -> Self:
        """A config of what a ``Loader`` gave, its ``ConfigDict`` not made yet."""
        from .fast_copy import PURE_VALUES, TEXT_VALUES

        check_keys(loaded.cfg_dict, filename)
        cfg: Any = cls.__new__(cls)
        cfg._set("_raw", (loaded.cfg_dict, PURE_VALUES if loaded.pure else TEXT_VALUES))
        cfg._set("_known", loaded.lazies)
        cfg._set_source(filename, loaded.text, env_variables, format_python_code)
        made: Self = cfg
        return made

    def _materialize(self) -> ConfigDict:
        """Make ``_cfg_dict`` (Config.__getattr__ calls this when it is not made yet)."""
        from .fast_copy import copy_tree

        state = self.__dict__
        raw = state.get("_raw")
        if raw is None:  # made by another thread meanwhile, or not a loaded config
            if "_cfg_dict" in state:
                made: ConfigDict = state["_cfg_dict"]
                return made
            raise AttributeError("_cfg_dict")
        values, rules = raw
        known = [(lazy, lazy) for lazy in state.get("_known", ())]
        copied = wrap(copy_tree(values, rules, known))
        # One object for every thread that asks at once: the first stored.
        cfg_dict: ConfigDict = state.setdefault("_cfg_dict", copied)
        state.pop("_raw", None)
        state.pop("_known", None)
        return cfg_dict

    def _values(self) -> tuple[dict[str, Any], list[Any]]:
        """The values as they are now (raw or made), and the lazy objects they likely hold."""
        state = self.__dict__
        raw = state.get("_raw")
        if raw is None:
            made: ConfigDict = self._cfg_dict  # type: ignore[attr-defined]
            return made, []
        return raw[0], state.get("_known", [])


def check_keys(cfg_dict: dict[str, Any], filename: str | None) -> None:
    """Refuse keys that are ``Config``'s own attributes."""
    for key in cfg_dict:
        if key in RESERVED_KEYS:
            raise ConfigKeyError(
                f"{key} is reserved for config file: Config.{key} is the config's own "
                "attribute, so it cannot be a config key",
                filename,
            )
