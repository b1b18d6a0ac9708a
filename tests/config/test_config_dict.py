import copy
import pickle
from collections import OrderedDict

import pytest

from treadle.config import ConfigDict, LazyObject


def test_attribute_access_and_nested_conversion():
    cfg = ConfigDict(model=dict(layers=[dict(depth=2), (dict(k=1),)]), od=OrderedDict(a=1))
    assert cfg.model.layers[0].depth == 2
    assert isinstance(cfg.model.layers[1][0], ConfigDict)
    assert isinstance(cfg.model.layers[1], tuple)
    assert isinstance(cfg.od, ConfigDict)
    cfg.extra = dict(x=[dict(y=1)])
    assert cfg.extra.x[0].y == 1
    cfg["item"] = {"z": 3}
    assert cfg.item.z == 3


def test_dict_subclasses_keep_their_type():
    class Mine(dict):
        pass

    assert type(ConfigDict(a=Mine(b=1))["a"]) is Mine


def test_missing_attribute_names_the_key_and_the_closest():
    cfg = ConfigDict(model=1, optimizer=2)
    with pytest.raises(
        AttributeError, match=r"no attribute 'optimiser' \(did you mean 'optimizer'"
    ):
        _ = cfg.optimiser
    with pytest.raises(KeyError, match="nothing"):
        _ = cfg["nothing"]


def test_read_only_method_names():
    cfg = ConfigDict()
    with pytest.raises(AttributeError, match="'items' is read-only"):
        cfg.items = 1


def test_to_dict_gives_plain_types():
    cfg = ConfigDict(a=dict(b=[dict(c=1)], t=(dict(d=2),)))
    plain = cfg.to_dict()
    assert plain == {"a": {"b": [{"c": 1}], "t": ({"d": 2},)}}
    assert type(plain["a"]) is dict
    assert type(plain["a"]["b"][0]) is dict


def test_update_merges_nested_dicts():
    cfg = ConfigDict(model=dict(a=1, b=dict(c=2)))
    cfg.update(dict(model=dict(b=dict(d=3))), new=1)
    assert cfg.to_dict() == {"model": {"a": 1, "b": {"c": 2, "d": 3}}, "new": 1}


def test_merge_honours_delete():
    cfg = ConfigDict(model=dict(a=1, b=dict(c=2)))
    cfg.merge(dict(model=dict(b=dict(_delete_=True, e=5))))
    assert cfg.to_dict() == {"model": {"a": 1, "b": {"e": 5}}}


def test_copy_deepcopy_and_pickle():
    cfg = ConfigDict(a=dict(b=[1, 2]), lazy=None)
    shallow = copy.copy(cfg)
    deep = copy.deepcopy(cfg)
    assert shallow.a is cfg.a and deep.a is not cfg.a and deep == cfg
    restored = pickle.loads(pickle.dumps(cfg))
    assert (
        isinstance(restored, ConfigDict) and restored == cfg and isinstance(restored.a, ConfigDict)
    )


def test_lazy_values_are_built_on_read_and_strings_in_to_dict():
    cfg = ConfigDict(type=LazyObject("collections", "OrderedDict"))
    assert cfg.type is OrderedDict
    assert cfg["type"] is OrderedDict
    assert cfg.get("type") is OrderedDict
    assert dict(cfg.items())["type"] is OrderedDict
    assert cfg.to_dict() == {"type": "collections.OrderedDict"}
    restored = pickle.loads(pickle.dumps(cfg))
    assert restored.type is OrderedDict


def test_pop_and_setdefault():
    cfg = ConfigDict(a=1)
    assert cfg.pop("missing") is None
    assert cfg.pop("a") == 1
    assert cfg.setdefault("b", dict(c=1)).c == 1
