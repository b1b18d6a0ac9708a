import copy
import math
import pickle

import pytest

from treadle.config import Config
from treadle.config.config import unified_diff

SOURCES = [
    "simple.py",
    "simple.json",
    "simple.yaml",
    "chain/level3.py",
    "mixed/child.json",
    "mixed/child.yaml",
    "refs/base_vars.py",
]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("ext", [".py", ".json", ".yaml", ".yml"])
def test_dump_round_trips(data, tmp_path, source, ext):
    cfg = Config.fromfile(data / source)
    out = tmp_path / f"dumped{ext}"
    assert cfg.dump(out) is None
    again = Config.fromfile(out).to_dict()
    expected = cfg.to_dict()
    if ext == ".json":  # JSON has no tuples
        expected = _tuples_to_lists(expected)
    assert again == expected


def _tuples_to_lists(value):
    if isinstance(value, dict):
        return {k: _tuples_to_lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_tuples_to_lists(v) for v in value]
    return value


def test_dump_without_file_uses_the_config_format(data):
    assert Config.fromfile(data / "simple.yaml").dump().startswith("model:\n")
    assert Config.fromfile(data / "simple.json").dump().lstrip().startswith("{")
    assert (
        Config.fromfile(data / "simple.py").dump()
        == Config.fromfile(data / "simple.py").pretty_text
    )


def test_pretty_text_is_readable_python(data):
    text = Config.fromfile(data / "chain" / "level3.py").pretty_text
    compile(text, "<dump>", "exec")
    assert "model = dict(\n    backbone=dict(" in text
    assert all(len(line) <= 100 for line in text.splitlines())
    mapping = Config.fromfile(data / "simple.py").pretty_text
    assert "mapping = {'3': None, 'a-b': 1, 'c d': [1, 2.5, 'x']}" in mapping


def test_long_lists_wrap_at_100_columns(tmp_path):
    cfg = Config(dict(values=list(range(60)), words=tuple(f"word{i}" for i in range(30)), one=(1,)))
    text = cfg.pretty_text
    assert all(len(line) <= 100 for line in text.splitlines())
    assert text.count("\n") > 4 and "one = (1,)" in text
    out = tmp_path / "long.py"
    cfg.dump(out)
    assert Config.fromfile(out).to_dict() == cfg.to_dict()


def test_odd_values_round_trip(tmp_path):
    cfg = Config(
        {
            "inf": float("inf"),
            "neg": -math.inf,
            "nested": {"if": 1, "x": {"a b": [dict()]}},
            "empty": {},
            "t": (),
        }
    )
    out = tmp_path / "odd.py"
    cfg.dump(out)
    again = Config.fromfile(out).to_dict()
    assert again == cfg.to_dict()


def test_keys_that_are_not_names_round_trip(tmp_path):
    cfg = Config({"a-b": 1, "class": dict(x=1), "ok": 2})
    out = tmp_path / "names.py"
    cfg.dump(out)
    assert Config.fromfile(out).to_dict() == cfg.to_dict()


def test_lazy_objects_dump_as_imports(data, demo_packages, tmp_path):
    cfg = Config.fromfile(data / "lazy" / "child.py")
    text = cfg.pretty_text
    assert "from lazypkg_demo.models import TinyNet" in text
    assert "type=TinyNet" in text
    out = tmp_path / "lazy_dump.py"
    cfg.dump(out)
    again = Config.fromfile(out)
    assert again.to_dict() == cfg.to_dict()


def test_name_clashes_in_imports_get_aliases(tmp_path):
    (tmp_path / "clash_cfg.py").write_text(
        "from no_such_pkg_a import Net\nfrom no_such_pkg_b import Net as Net2\n"
        "a = dict(type=Net)\nb = dict(type=Net2)\nNetwork = 1\n"
    )
    cfg = Config.fromfile(tmp_path / "clash_cfg.py")
    out = tmp_path / "out.py"
    cfg.dump(out)
    assert Config.fromfile(out).to_dict() == cfg.to_dict()


def test_dump_to_unknown_format(data, tmp_path):
    with pytest.raises(OSError, match=r"cannot dump a config as '\.toml'"):
        Config.fromfile(data / "simple.py").dump(tmp_path / "x.toml")


def test_deepcopy_copy_and_pickle(data):
    cfg = Config.fromfile(data / "chain" / "level2.py")
    deep = copy.deepcopy(cfg)
    assert deep.to_dict() == cfg.to_dict() and deep.filename == cfg.filename
    deep.model.backbone.depth = 1
    assert cfg.model.backbone.depth == 101
    shallow = copy.copy(cfg)
    assert shallow.model is cfg.model
    restored = pickle.loads(pickle.dumps(cfg))
    assert restored.to_dict() == cfg.to_dict() and restored.text == cfg.text


def test_diff(data):
    diff = Config.diff(str(data / "chain" / "level1.py"), str(data / "chain" / "level2.py"))
    assert diff.startswith("--- \n\n+++ \n\n@@ ")  # MMEngine's text: no names, blank lines
    assert "\n+data = dict(" in diff
    assert any(line.startswith("-") and "FPN" in line for line in diff.splitlines())
    same = Config.fromfile(data / "simple.py")
    assert Config.diff(same, same) == "\n"


def test_diff_is_mmengines_text():
    first, second = Config(dict(a=1, b=2)), Config(dict(a=1, b=3))
    expected = "--- \n\n+++ \n\n@@ -1,3 +1,3 @@\n\n a = 1\n-b = 2\n+b = 3\n \n\n"
    assert Config.diff(first, second) == expected


def test_unified_diff_names_the_files(data):
    level1, level2 = str(data / "chain" / "level1.py"), str(data / "chain" / "level2.py")
    diff = unified_diff(level1, level2)
    assert diff.startswith(f"--- {level1}\n+++ {level2}\n@@ ")
    assert "\n+data = dict(" in diff
    assert unified_diff(Config(dict(a=1)), Config(dict(a=2))).startswith("--- cfg1\n+++ cfg2\n")
    assert unified_diff(level1, level1) == ""


def test_dump_of_a_config_without_file_is_python():
    assert Config(dict(a=1, b=2)).dump() == "a = 1\nb = 2\n"


def test_a_dumped_file_has_the_permissions_of_a_plain_write(data, tmp_path):
    # Written under a temporary name and renamed, but readable like any file the user writes.
    import os
    import stat

    umask = os.umask(0o022)
    try:
        out = tmp_path / "dumped.py"
        Config.fromfile(data / "simple.py").dump(out)
        assert stat.S_IMODE(out.stat().st_mode) == 0o644
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    finally:
        os.umask(umask)
