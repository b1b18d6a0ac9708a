"""add_config reads a Config by duck typing: treadle.visual never imports treadle.config."""

from __future__ import annotations

import pytest

from treadle.visual.config_view import config_dict, config_text, flatten_config


class ConfigLike:
    """What treadle's and MMEngine's Config both offer: pretty_text and to_dict."""

    def __init__(self, data: dict) -> None:
        self._data = data

    @property
    def pretty_text(self) -> str:
        return "model = dict(depth=18)\n"

    def to_dict(self) -> dict:
        return self._data


def test_text_prefers_pretty_text_and_falls_back_to_pformat():
    assert config_text(ConfigLike({})) == "model = dict(depth=18)\n"
    assert config_text({"lr": 0.1, "model": {"depth": 18}}) == "{'lr': 0.1, 'model': {'depth': 18}}"


def test_dict_unwraps_to_dict_and_nested_mappings():
    data = {"model": {"layers": [1, {"k": 2}]}, "t": (1, 2)}
    assert config_dict(ConfigLike(data)) == data
    assert type(config_dict(data)["model"]) is dict


def test_flatten_joins_nested_keys():
    flat = flatten_config({"model": {"depth": 18, "head": {"n": 2}}, "lr": 0.1, "empty": {}})
    assert flat == {"model.depth": 18, "model.head.n": 2, "lr": 0.1, "empty": {}}
    assert flatten_config({"a": {"b": 1}}, separator="/") == {"a/b": 1}


def test_anything_else_is_named():
    with pytest.raises(TypeError, match="add_config expects a Config or a dict, got list"):
        config_dict([1, 2])
