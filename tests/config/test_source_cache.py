"""The source cache is invisible: every load sees the files and environment as they are then,
and what one load returns shares nothing mutable with the next."""

import os

import pytest

from treadle.config import Config, ConfigError, source_cache

PURE_BASE = "model = dict(depth={depth}, layers=[dict(n=1)])\n"
PURE_CHILD = (
    "from treadle.config import read_base\n\n"
    "with read_base():\n"
    "    from .base import *\n\n"
    "from collections import OrderedDict\n"
    "model.width = 8\n"
)
TEXT_BASE = "model = dict(depth={depth}, layers=[dict(n=1)])\n"
TEXT_CHILD = "_base_ = './base.py'\nmodel = dict(width=8)\n"


@pytest.fixture(params=["pure", "text"])
def tree(request, tmp_path):
    """A child config over one base; ``write_base(depth)`` rewrites the base."""
    base, child = (PURE_BASE, PURE_CHILD) if request.param == "pure" else (TEXT_BASE, TEXT_CHILD)

    def write_base(depth, keep_stat=False):
        path = tmp_path / "base.py"
        before = os.stat(path) if keep_stat else None
        path.write_text(base.format(depth=depth))
        if before is not None:  # same size (one digit for another) and modification time
            assert os.stat(path).st_size == before.st_size
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    write_base(1)
    (tmp_path / "child.py").write_text(child)
    return tmp_path / "child.py", write_base


def test_an_edited_base_gives_the_new_dict(tree):
    child, write_base = tree
    assert Config.fromfile(child).model.depth == 1
    write_base(2)
    assert Config.fromfile(child).model.depth == 2


def test_an_edit_that_keeps_size_and_mtime_is_seen(tree):
    child, write_base = tree
    assert Config.fromfile(child).model.depth == 1
    write_base(7, keep_stat=True)
    assert Config.fromfile(child).model.depth == 7


def test_a_sweep_sees_each_version_of_a_changing_file(tree):
    child, write_base = tree
    for depth in (3, 4, 3, 5, 3):
        write_base(depth, keep_stat=True)
        assert Config.fromfile(child).model.depth == depth


def test_an_edited_child_gives_the_new_dict(tree):
    child, _ = tree
    Config.fromfile(child)
    text = child.read_text()
    child.write_text(text.replace("8", "9"))
    assert Config.fromfile(child).model.width == 9


def test_mutating_a_loaded_config_does_not_reach_the_next_load(tree):
    child, _ = tree
    first = Config.fromfile(child)
    first.model.depth = 100
    first.model.layers[0].n = 100
    first.model.layers.append({"n": 2})
    dict.__setitem__(first._cfg_dict, "extra", 1)
    second = Config.fromfile(child)
    assert second.to_dict() == {"model": {"depth": 1, "layers": [{"n": 1}], "width": 8}}
    assert second.model is not first.model
    assert second.model.layers is not first.model.layers


def test_a_deleted_base_is_an_error_naming_it(tree):
    child, _ = tree
    Config.fromfile(child)
    (child.parent / "base.py").unlink()
    with pytest.raises(FileNotFoundError, match=r"base.*not found: .*base\.py") as err:
        Config.fromfile(child)
    assert isinstance(err.value, ConfigError)
    assert str(child) in str(err.value)


def test_a_broken_edit_raises_every_time_then_a_fixed_one_loads(tree):
    child, write_base = tree
    Config.fromfile(child)
    base = child.parent / "base.py"
    base.write_text("model = dict(depth=\n")
    for _ in range(2):
        with pytest.raises(SyntaxError, match=r"base\.py:1"):
            Config.fromfile(child)
    write_base(6)
    assert Config.fromfile(child).model.depth == 6


def test_cfg_text_follows_the_files(tree):
    child, write_base = tree
    Config.fromfile(child)
    write_base(5, keep_stat=True)
    text = Config.fromfile(child).text
    if "_base_" in child.read_text():  # a text-style config's text holds its bases'
        assert "depth=5" in text and "depth=1" not in text
    else:
        assert text == child.read_text()


def test_environment_variables_are_read_on_every_load(tmp_path, monkeypatch):
    (tmp_path / "base.yaml").write_text("root: '{{$TREADLE_CACHE_ROOT:/default}}'\n")
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text("_base_ = './base.yaml'\nname = '{{$TREADLE_CACHE_NAME:x}}'\n")
    monkeypatch.setenv("TREADLE_CACHE_ROOT", "/a")
    monkeypatch.setenv("TREADLE_CACHE_NAME", "first")
    first = Config.fromfile(cfg_file)
    assert (first.root, first.name) == ("/a", "first")
    monkeypatch.setenv("TREADLE_CACHE_ROOT", "/b")
    monkeypatch.delenv("TREADLE_CACHE_NAME")
    second = Config.fromfile(cfg_file)
    assert (second.root, second.name) == ("/b", "x")
    assert second.env_variables == {"TREADLE_CACHE_ROOT": "/b"}


def test_pure_python_configs_read_the_environment_on_every_load(tmp_path, monkeypatch):
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text(
        "import os\nfrom treadle.config import read_base\n"
        "root = os.environ.get('TREADLE_CACHE_ROOT', '/default')\n"
    )
    monkeypatch.setenv("TREADLE_CACHE_ROOT", "/a")
    assert Config.fromfile(cfg_file, lazy_import=True).root == "/a"
    monkeypatch.setenv("TREADLE_CACHE_ROOT", "/b")
    assert Config.fromfile(cfg_file, lazy_import=True).root == "/b"


def test_predefined_variables_name_the_file_loaded(tmp_path):
    text = "work_dir = '{{ fileDirname }}/{{ fileBasenameNoExtension }}'\n"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "cfg.py").write_text(text)
    for folder in ("a", "b", "a"):
        cfg = Config.fromfile(tmp_path / folder / "cfg.py")
        assert cfg.work_dir == f"{tmp_path / folder}/cfg".replace("\\", "/")
        assert cfg.filename == str(tmp_path / folder / "cfg.py")


def test_a_dict_bound_twice_gives_two_dicts(tmp_path):
    (tmp_path / "base.py").write_text("val = dict(a=dict(b=1))\ntest = val\n")
    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text(
        "from treadle.config import read_base\nwith read_base():\n    from .base import *\n"
        "other = val\nval.a.b = 2\n"
    )
    cfg = Config.fromfile(cfg_file)
    assert cfg.to_dict() == {
        "val": {"a": {"b": 2}},
        "test": {"a": {"b": 1}},
        "other": {"a": {"b": 2}},
    }
    cfg.val.a.b = 3
    assert (cfg.test.a.b, cfg.other.a.b) == (1, 2)


def test_loading_with_an_empty_cache_gives_the_same_dict(tree):
    child, _ = tree
    warm = Config.fromfile(child).to_dict()
    source_cache.clear()
    assert Config.fromfile(child).to_dict() == warm


def test_a_cycle_through_a_symbolic_link_is_found(tmp_path):
    # Paths are compared as written until a chain is deep: a link that makes every spelling of
    # the file new must still end in the cycle error, not a RecursionError.
    (tmp_path / "link").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "a.py").write_text("_base_ = './link/a.py'\nx = 1\n")
    with pytest.raises(RuntimeError, match=r"include each other: .*a\.py -> .*a\.py"):
        Config.fromfile(tmp_path / "a.py")


def test_a_child_changing_a_shared_base_does_not_change_it_for_the_next(tmp_path):
    (tmp_path / "base.py").write_text("model = dict(depth=1, stages=[dict(n=1)])\n")
    head = "from treadle.config import read_base\nwith read_base():\n    from .base import *\n"
    (tmp_path / "deep.py").write_text(head + "model.depth = 5\nmodel.stages[0].n = 5\n")
    (tmp_path / "plain.py").write_text(head + "name = 'plain'\n")
    for _ in range(2):
        assert Config.fromfile(tmp_path / "deep.py").model.to_dict() == {
            "depth": 5,
            "stages": [{"n": 5}],
        }
        assert Config.fromfile(tmp_path / "plain.py").model.to_dict() == {
            "depth": 1,
            "stages": [{"n": 1}],
        }
