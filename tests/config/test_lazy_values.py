"""A loaded config keeps its values as plain dicts until they are used, and wraps a dict in a
ConfigDict when it is first read: whatever user code does with the config must see what it saw
when every dict was converted on loading (and what MMEngine gives)."""

import copy
import pickle

import pytest

from treadle.config import Config, ConfigDict

TEXT = """
pipeline = [dict(type='Load'), dict(type='Resize', scale=(1333, 800))]
model = dict(type='Net', backbone=dict(depth=50, stages=[dict(n=1), dict(n=2)]), tags={'a'})
data = dict(train=dict(pipeline=pipeline), val=dict(pipeline=pipeline))
nested = [[dict(x=1)], (dict(y=2),)]
alias = model
"""


@pytest.fixture
def path(tmp_path):
    file = tmp_path / "cfg.py"
    file.write_text(TEXT)
    return file


def _all_dicts_are_config_dicts(value):
    if isinstance(value, dict):
        assert type(value) is ConfigDict, value
        for item in value.values():
            _all_dicts_are_config_dicts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _all_dicts_are_config_dicts(item)


def test_every_read_gives_config_dicts_all_the_way_down(path):
    cfg = Config.fromfile(path)
    assert type(cfg.model) is ConfigDict and type(cfg["model"]) is ConfigDict
    assert type(cfg.get("model")) is ConfigDict
    assert type(cfg.model.backbone.stages[1]) is ConfigDict
    assert type(cfg.nested[0][0]) is ConfigDict and type(cfg.nested[1][0]) is ConfigDict
    assert type(cfg.nested[1]) is tuple
    _all_dicts_are_config_dicts(cfg._cfg_dict)
    _all_dicts_are_config_dicts(list(dict(cfg.items()).values()))
    _all_dicts_are_config_dicts(list(cfg._cfg_dict.values()))
    for key in cfg:
        _all_dicts_are_config_dicts(cfg[key])


def test_reads_give_one_object_and_changes_through_it_stay(path):
    cfg = Config.fromfile(path)
    assert cfg.model is cfg.model and cfg.model.backbone is cfg["model"]["backbone"]
    backbone = cfg.model.backbone
    backbone.depth = 101
    backbone.stages[0].n = 7
    backbone.stages.append(dict(n=3))
    cfg.model.tags.add("b")
    assert cfg.model.backbone.depth == 101
    out = cfg.to_dict()
    assert out["model"]["backbone"] == {"depth": 101, "stages": [{"n": 7}, {"n": 2}, {"n": 3}]}
    assert out["model"]["tags"] == {"a", "b"}
    assert "depth=101" in cfg.pretty_text


def test_values_shared_in_the_file_are_separate_copies(path):
    # As MMEngine's ConfigDict: `alias = model` and one pipeline under two keys are copies.
    cfg = Config.fromfile(path)
    cfg.model.backbone.depth = 18
    cfg.data.train.pipeline[1].scale = (640, 640)
    assert cfg.alias.backbone.depth == 50
    assert cfg.data.val.pipeline[1].scale == (1333, 800)
    assert cfg.pipeline[1].scale == (1333, 800)
    out = cfg.to_dict()
    assert out["data"]["train"]["pipeline"] is not out["data"]["val"]["pipeline"]


def test_to_dict_gives_new_plain_values_every_time(path):
    cfg = Config.fromfile(path)
    first = cfg.to_dict()
    assert type(first["model"]) is dict and type(first["model"]["backbone"]["stages"][0]) is dict
    first["model"]["backbone"]["depth"] = 0
    first["pipeline"].append("x")
    assert cfg.to_dict()["model"]["backbone"]["depth"] == 50
    assert cfg.pipeline == [{"type": "Load"}, {"type": "Resize", "scale": (1333, 800)}]
    assert cfg.to_dict() == first | {"model": cfg.to_dict()["model"], "pipeline": cfg.pipeline}


def test_to_dict_before_and_after_the_first_read_agree(path):
    before = Config.fromfile(path).to_dict()
    cfg = Config.fromfile(path)
    assert cfg.model.type == "Net"
    assert cfg.to_dict() == before


def test_copies_and_pickles_hold_the_same_values(path):
    cfg = Config.fromfile(path)
    for other in (copy.deepcopy(cfg), pickle.loads(pickle.dumps(cfg)), copy.copy(cfg)):
        assert other.to_dict() == cfg.to_dict()
        assert type(other.model.backbone.stages[0]) is ConfigDict
    deep = copy.deepcopy(cfg)
    deep.model.backbone.depth = 1
    assert cfg.model.backbone.depth == 50
    loaded = pickle.loads(pickle.dumps(Config.fromfile(path)))  # pickled before any read
    assert loaded == cfg and type(loaded.data.train) is ConfigDict


def test_a_shallow_copy_shares_the_nested_dicts(path):
    # ConfigDict.copy (and Config.copy) is shallow, as MMEngine's: nested dicts are shared.
    cfg = Config.fromfile(path)
    model = cfg.model.copy()
    model.backbone.depth = 34
    assert cfg.model.backbone.depth == 34
    other = cfg.copy()
    other.data.train.pipeline[0].type = "LoadImage"
    assert cfg.data.train.pipeline[0].type == "LoadImage"


def test_update_merges_into_dicts_not_read_yet(path):
    cfg = Config.fromfile(path)
    cfg._cfg_dict.update(model=dict(backbone=dict(depth=152)))
    assert cfg.model.backbone.to_dict() == {"depth": 152, "stages": [{"n": 1}, {"n": 2}]}
    assert cfg.model.type == "Net"


def test_merge_from_dict_and_delete_on_values_not_read_yet(path):
    cfg = Config.fromfile(path)
    cfg.merge_from_dict({"model.backbone.depth": 18, "pipeline.1.scale": (1, 1)})
    cfg.merge_from_dict({"data.train": dict(_delete_=True, batch_size=2)})
    out = cfg.to_dict()
    assert out["model"]["backbone"]["depth"] == 18 and out["model"]["type"] == "Net"
    assert out["pipeline"][1] == {"type": "Resize", "scale": (1, 1)}
    assert out["data"]["train"] == {"batch_size": 2}
    assert type(cfg.data.val.pipeline[0]) is ConfigDict


def test_pop_popitem_and_setdefault_give_config_dicts(path):
    cfg = Config.fromfile(path)
    assert type(cfg._cfg_dict.pop("model")) is ConfigDict
    assert "model" not in cfg
    key, value = cfg._cfg_dict.popitem()
    assert key == "alias" and type(value) is ConfigDict
    assert type(cfg._cfg_dict.setdefault("data")) is ConfigDict
    assert cfg._cfg_dict.pop("missing") is None


def test_equality_and_unpacking_see_config_dicts(path):
    cfg = Config.fromfile(path)
    other = Config.fromfile(path)
    assert cfg == other and cfg.model == other.model.to_dict()
    assert type({**cfg.model}["backbone"]) is ConfigDict
    assert type(dict(cfg.model)["backbone"]) is ConfigDict

    def takes(**kwargs):
        return kwargs

    assert type(takes(**cfg.data)["train"]) is ConfigDict


def test_dump_writes_the_values_as_loaded_or_changed(path, tmp_path):
    cfg = Config.fromfile(path)
    out = tmp_path / "out.py"
    cfg.dump(out)
    assert Config.fromfile(out).to_dict() == cfg.to_dict()
    cfg.model.backbone.depth = 3
    cfg.dump(out)
    assert Config.fromfile(out).model.backbone.depth == 3


def test_a_base_value_changed_by_a_child_through_base_refs(tmp_path):
    (tmp_path / "base.py").write_text(
        "p = [dict(n=1)]\na = dict(pipeline=p)\nb = dict(pipeline=p)\nloaders = [a, b]\n"
    )
    (tmp_path / "child.py").write_text(
        "_base_ = ['./base.py']\nloaders = _base_.loaders\n"
        "for loader in loaders:\n    loader['pipeline'][0]['n'] = 5\n"
        "del loader\n"
    )
    out = Config.fromfile(tmp_path / "child.py").to_dict()
    assert out["loaders"] == [{"pipeline": [{"n": 5}]}, {"pipeline": [{"n": 5}]}]
    assert out["a"] == out["b"] == {"pipeline": [{"n": 1}]} and out["p"] == [{"n": 1}]


def test_lazy_objects_are_built_when_read_and_strings_in_to_dict(tmp_path, demo_packages):
    (tmp_path / "cfg.py").write_text(
        "from lazypkg_demo.models import TinyNet\nimport lazypkg_demo.models as models\n"
        "model = dict(type=TinyNet, items=[dict(f=models.make_optimizer)])\n"
    )
    cfg = Config.fromfile(tmp_path / "cfg.py")
    assert cfg.to_dict()["model"] == {
        "type": "lazypkg_demo.models.TinyNet",
        "items": [{"f": "lazypkg_demo.models.make_optimizer"}],
    }
    assert "type=TinyNet" in cfg.pretty_text
    from lazypkg_demo.models import TinyNet, make_optimizer

    assert cfg.model.type is TinyNet and cfg.model["items"][0].f is make_optimizer


def test_objects_in_values_are_shared_not_copied(tmp_path):
    class Thing:
        pass

    thing = Thing()
    cfg = Config(dict(model=dict(thing=thing, kind=Thing, fn=len)))
    out = cfg.to_dict()
    assert out["model"]["thing"] is thing and out["model"]["kind"] is Thing
    assert out["model"]["fn"] is len
    (tmp_path / "cfg.py").write_text("def fn():\n    return 1\nmodel = dict(fn=fn, f=[fn])\n")
    loaded = Config.fromfile(tmp_path / "cfg.py")
    assert loaded.to_dict()["model"]["fn"] is loaded.model.fn is loaded.model.f[0]


def test_values_that_hold_themselves_are_refused_clearly(tmp_path):
    # MMEngine raises RecursionError on loading; treadle when the values are first used.
    (tmp_path / "cfg.py").write_text("a = []\na.append(a)\n")
    cfg = Config.fromfile(tmp_path / "cfg.py")
    for use in (cfg.to_dict, lambda: cfg.a):
        with pytest.raises(RecursionError, match=r"hold themselves.*maximum recursion depth"):
            use()


def test_values_a_child_reaches_only_through_globals_are_config_dicts_too(tmp_path):
    (tmp_path / "base.py").write_text("model = dict(depth=1)\nother = dict(n=[dict(k=1)])\n")
    (tmp_path / "child.py").write_text(
        "from treadle.config import read_base\nwith read_base():\n    from .base import *\n"
        "globals()['model'].depth = 2\n"
    )
    cfg = Config.fromfile(tmp_path / "child.py")
    assert cfg.to_dict() == {"model": {"depth": 2}, "other": {"n": [{"k": 1}]}}
    assert type(cfg.other.n[0]) is ConfigDict
