"""Inputs that MMEngine accepts and treadle once refused: they load to MMEngine's dict."""

from __future__ import annotations

import pytest

from treadle.config import Config


def write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


@pytest.fixture
def base(tmp_path):
    write(tmp_path, "base.py", "model = dict(type='Net', depth=18)\nlr = 0.1\n")
    return tmp_path


def test_delete_on_a_key_the_base_lacks_sets_the_value_as_written(base):
    # Toolbox configs do this; MMEngine keeps the dict, _delete_ included.
    child = write(
        base,
        "child.py",
        "_base_ = './base.py'\n"
        "optim_wrapper = dict(_delete_=True, type='OptimWrapper')\n"
        "model = dict(neck=dict(_delete_=True, type='FPN'))\n",
    )
    cfg = Config.fromfile(child).to_dict()
    assert cfg["optim_wrapper"] == {"_delete_": True, "type": "OptimWrapper"}
    assert cfg["model"] == {"type": "Net", "depth": 18, "neck": {"_delete_": True, "type": "FPN"}}


def test_delete_false_on_a_new_key_is_kept_and_dropped_on_a_merged_one(base):
    child = write(
        base,
        "child.py",
        "_base_ = './base.py'\n"
        "extra = dict(_delete_=False, a=1)\n"
        "model = dict(_delete_=False, depth=50)\n",
    )
    cfg = Config.fromfile(child).to_dict()
    assert cfg["extra"] == {"_delete_": False, "a": 1}
    assert cfg["model"] == {"type": "Net", "depth": 50}


def test_delete_on_a_new_key_in_yaml(tmp_path):
    write(tmp_path, "base.yaml", "a:\n  x: 1\n")
    child = write(tmp_path, "child.yaml", "_base_: ./base.yaml\nb:\n  _delete_: true\n  z: 3\n")
    assert Config.fromfile(child).to_dict()["b"] == {"_delete_": True, "z": 3}


def test_delete_on_a_new_key_is_still_reported_in_strict_mode(base):
    child = write(base, "child.py", "_base_ = './base.py'\nnew = dict(_delete_=True, a=1)\n")
    with pytest.raises(KeyError, match="defined by none of its bases"):
        Config.fromfile(child, strict=True)


def test_merge_from_dict_delete_on_a_missing_key_sets_it():
    cfg = Config(dict(a=dict(x=1)))
    cfg.merge_from_dict({"b": dict(_delete_=True, c=5)})
    assert cfg.to_dict() == {"a": {"x": 1}, "b": {"_delete_": True, "c": 5}}


def test_merge_from_dict_list_index_into_a_dict_item():
    cfg = Config(dict(item=[dict(a=0), dict(b=0, c=0)]))
    cfg.merge_from_dict({"item.0.a": 1, "item.1.b": 1}, allow_list_keys=True)
    assert cfg.to_dict()["item"] == [{"a": 1}, {"b": 1, "c": 0}]


def test_merge_from_dict_index_past_the_end_is_a_key_error_with_mmengine_words():
    cfg = Config(dict(item=[dict(a=0), dict(b=0)]))
    # KeyError is what MMEngine raises; IndexError what the mistake is.
    for error in (KeyError, IndexError):
        with pytest.raises(error, match=r"Index 2 exceeds the length of list 'item' \(2 items\)"):
            cfg.merge_from_dict({"item.2.a": 1}, allow_list_keys=True)


def test_dict_into_a_list_without_list_keys_names_mmengine_phrase():
    cfg = Config(dict(item=[dict(a=0)]))
    with pytest.raises(
        TypeError,
        match=r"'item' cannot inherit from base because item is a dict in the child config but "
        r"is of type <class 'list'> in base config",
    ):
        cfg.merge_from_dict({"item.0.a": 1}, allow_list_keys=False)
