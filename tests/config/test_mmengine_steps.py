"""MMEngine's private loading steps as ``Config`` static methods (``MMEngineSteps``): each works
on its own, with MMEngine's signature, as toolboxes and their tests call them."""

import json
import os

import pytest

from treadle.config import Config, ConfigDict


def test_validate_py_syntax(tmp_path):
    good = tmp_path / "good.py"
    good.write_text("a = dict(b=1)\n")
    Config._validate_py_syntax(good)
    bad = tmp_path / "bad.py"
    bad.write_text("a = 1\ndict(a=1,b=2.c=3)\n")
    with pytest.raises(SyntaxError, match=r"bad\.py:2: There are syntax errors in config file: "):
        Config._validate_py_syntax(str(bad))


def test_substitute_predefined_vars(tmp_path):
    source, target = tmp_path / "exp_1.py", tmp_path / "out.py"
    source.write_text(
        "a = '{{ fileDirname }}'\nb = '{{fileBasename}}/{{fileBasenameNoExtension}}'\n"
    )
    assert Config._substitute_predefined_vars(source, target) is None
    assert target.read_text() == f"a = '{tmp_path.as_posix()}'\nb = 'exp_1.py/exp_1'\n"


def test_substitute_env_variables(tmp_path, monkeypatch):
    source, target = tmp_path / "a.py", tmp_path / "b.py"
    source.write_text("root = '{{$DATA_ROOT:/data}}'\nn = {{'$NUM:80'}}\n")
    monkeypatch.delenv("DATA_ROOT", raising=False)
    monkeypatch.setenv("NUM", "3")
    assert Config._substitute_env_variables(source, target) == {"NUM": "3"}
    assert target.read_text() == "root = '/data'\nn = 3\n"
    # the same file as source and target, as MMEngine's _file2dict calls it
    source.write_text("x = {{$UNSET_TREADLE_VAR:}}\n")
    monkeypatch.delenv("UNSET_TREADLE_VAR", raising=False)
    with pytest.raises(KeyError, match=r"a\.py:1: environment variable \$UNSET_TREADLE_VAR"):
        Config._substitute_env_variables(source, source)


def test_pre_substitute_then_substitute_base_vars_give_the_base_values(tmp_path):
    (tmp_path / "base.py").write_text("sizes = [1, 2]\nmodel = dict(depth=50)\n")
    child = tmp_path / "child.py"
    child.write_text(
        "_base_ = './base.py'\n"
        "a = {{_base_.sizes}}\n"
        "b = dict(depth={{ _base_.model.depth }}, again={{_base_.sizes}})\n"
    )
    temp = tmp_path / "temp.py"
    placeholders = Config._pre_substitute_base_vars(child, temp)
    assert sorted(placeholders.values()) == ["model.depth", "sizes"]
    text = temp.read_text()
    for placeholder in placeholders:
        assert f'"{placeholder}"' in text  # quoted: the text is valid Python
    namespace: dict = {}
    exec(text.replace("_base_ = './base.py'\n", ""), namespace)
    values = {"a": namespace["a"], "b": namespace["b"]}
    base = {"sizes": [1, 2], "model": {"depth": 50}}
    substituted = Config._substitute_base_vars(values, placeholders, base)
    assert substituted == {"a": [1, 2], "b": {"depth": 50, "again": [1, 2]}}
    assert values["a"] != [1, 2]  # a copy was changed, not the argument


def test_pre_substitute_base_vars_in_json(tmp_path):
    source = tmp_path / "child.json"
    source.write_text('{"_base_": "./base.json", "a": {{ _base_.x.y }}, "b": [{{_base_.x.y}}]}')
    temp = tmp_path / "temp.json"
    placeholders = Config._pre_substitute_base_vars(source, temp)
    (placeholder,) = placeholders
    assert placeholders == {placeholder: "x.y"} and placeholder.startswith("_x.y_")
    loaded = json.loads(temp.read_text())  # a whole value becomes a JSON string
    assert loaded["a"] == placeholder and loaded["b"] == [placeholder]


def test_substitute_base_vars_in_tuples_lists_and_by_index():
    placeholders = {"_a_1": "a", "_b.1_2": "b.1"}
    cfg = {"x": ("_a_1", 1), "y": ["_b.1_2", "other"], "z": ConfigDict(w="_a_1")}
    out = Config._substitute_base_vars(cfg, placeholders, {"a": 7, "b": [5, 6]})
    assert out == {"x": (7, 1), "y": [6, "other"], "z": {"w": 7}}
    assert isinstance(out["z"], ConfigDict)


def test_substitute_base_vars_names_a_missing_key():
    with pytest.raises(KeyError, match=r"\{\{_base_\.a\.nope\}\}: the base config has no 'nope'"):
        Config._substitute_base_vars({"x": "_p_1"}, {"_p_1": "a.nope"}, {"a": {"b": 1}})


def test_dict_to_config_dict():
    cfg = {"a": 1, "b": {"c": {}}, "d": [{"e": {"f": ({"g": 1}, [])}}]}
    out = Config._dict_to_config_dict(cfg)
    assert isinstance(out, ConfigDict) and isinstance(out.b.c, ConfigDict)
    assert isinstance(out.d[0].e.f, tuple) and isinstance(out.d[0].e.f[0], ConfigDict)
    assert out == cfg and "_scope_" not in str(out)


def test_dict_to_config_dict_scopes_the_outermost_typed_dicts():
    cfg = {
        "model": {"type": "Net", "backbone": {"type": "ResNet"}},
        "scoped": {"type": "X", "_scope_": "mine"},
        "items": [{"type": "A"}],
        "plain": {"lr": 0.1},
    }
    out = Config._dict_to_config_dict(cfg, scope="mmdet")
    assert out.model._scope_ == "mmdet" and "_scope_" not in out.model.backbone
    assert out.scoped._scope_ == "mine"
    assert out["items"][0]._scope_ == "mmdet"
    assert "_scope_" not in out.plain
    assert "_scope_" not in cfg["model"]  # the argument is left as it was


def test_file2dict_of_a_config_that_loads_another(tmp_path):
    # `from mmengine import Config` keeps a config text-style (MMEngine's rule), and loads
    # without MMEngine installed: the import is pointed at treadle.config.
    (tmp_path / "other.py").write_text("item1 = [1, 2]\n")
    config = tmp_path / "code.py"
    config.write_text(
        "from mmengine import Config\n"
        f"cfg = Config.fromfile({os.fspath(tmp_path / 'other.py')!r})\n"
        "item5 = cfg.item1[0] + 1\n"
    )
    values, _, _ = Config._file2dict(config)
    assert values["item5"] == 2
    assert Config.fromfile(config).cfg.item1 == [1, 2]
