"""A closed pure-Python config copies only the base values its code names; the others stay
shared with the bases' kept values. Nothing a load returns, nor what a child's code does, may
reach another load through them."""

from treadle.config import Config, ConfigDict

HEAD = "from treadle.config import read_base\nwith read_base():\n"


def _write(folder, name, text):
    (folder / name).write_text(text)
    return folder / name


def test_values_a_child_does_not_name_are_never_changed_through_a_load(tmp_path):
    _write(tmp_path, "base.py", "model = dict(depth=1)\ndata = dict(parts=[dict(n=1)], size=2)\n")
    child = _write(tmp_path, "child.py", HEAD + "    from .base import *\nmodel.depth = 2\n")
    grandchild = _write(
        tmp_path, "grandchild.py", HEAD + "    from .child import *\ndata.parts.append({'n': 3})\n"
    )
    first = Config.fromfile(child)
    first.data.parts.append({"n": 2})
    first.data.size = 5
    assert Config.fromfile(grandchild).to_dict() == {
        "model": {"depth": 2},
        "data": {"parts": [{"n": 1}, {"n": 3}], "size": 2},
    }
    assert type(Config.fromfile(grandchild).data.parts[1]) is ConfigDict
    for path, depth in ((child, 2), (tmp_path / "base.py", 1)):
        assert Config.fromfile(path).to_dict() == {
            "model": {"depth": depth},
            "data": {"parts": [{"n": 1}], "size": 2},
        }


def test_a_base_value_bound_under_two_names_is_one_copy_changed_under_either(tmp_path):
    _write(tmp_path, "base.py", "model = dict(layers=[dict(n=1)])\nstages = [dict(n=1)]\n")
    child = _write(
        tmp_path,
        "child.py",
        HEAD
        + "    from .base import model, model as other, stages, stages as steps\n"
        + "other.layers.append(dict(n=2))\nsteps.append(dict(n=2))\n",
    )
    changed = [{"n": 1}, {"n": 2}]
    for _ in range(2):
        cfg = Config.fromfile(child)
        assert cfg.to_dict() == {
            "model": {"layers": changed},
            "other": {"layers": changed},
            "stages": changed,
            "steps": changed,
        }
        # what the code put in under one name is a ConfigDict under the other too
        assert type(cfg.model.layers[1]) is ConfigDict and type(cfg.stages[1]) is ConfigDict
        assert cfg.model is not cfg.other and cfg.stages is not cfg.steps
    assert Config.fromfile(tmp_path / "base.py").to_dict() == {
        "model": {"layers": [{"n": 1}]},
        "stages": [{"n": 1}],
    }
