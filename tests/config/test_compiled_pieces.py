"""Config code is compiled statement by statement, each distinct statement (and each distinct
head of imports) once per process, and reused in other files at other lines: loading must mean
what running each file whole means, and errors, tracebacks and lazy imports must name each
file's own name and lines."""

import traceback

import pytest

from treadle.config import Config, ConfigError

READ_BASE = "from treadle.config import read_base\nwith read_base():\n    from .base import *\n"


@pytest.mark.parametrize(
    "text",
    [
        # a line at column 0 inside a string, inside brackets, after a backslash
        "doc = '''\nx = 1\n'''\ny = 2\n",
        "items = [\n1,\n]\nz = 3\n",
        "items = dict(\na=1,\n)\n",
        "total = 1 + \\\n2\n",
        # clauses that continue a statement, decorators, a docstring in the middle
        "if False:\n    a = 1\nelse:\n    a = 2\n",
        "try:\n    b = 1\nexcept Exception:\n    b = 2\nfinally:\n    c = 3\n",
        "def deco(f):\n    return f\n@deco\ndef fn():\n    return 4\nvalue = fn()\n",
        "a = 1\n'''not a docstring'''\nb = 2\n",
        "for i in range(2):\n    pass\nelse:\n    done = True\n",
        "x = 1; y = 2\nz = x + y\n",
    ],
)
@pytest.mark.parametrize("head", ["", READ_BASE])
def test_what_a_file_means_whole(tmp_path, text, head):
    (tmp_path / "base.py").write_text("base_value = 1\n")
    path = tmp_path / "cfg.py"
    path.write_text(head + text)
    namespace: dict = {}
    exec(compile(text, "whole", "exec"), namespace)
    expected = {
        k: v
        for k, v in namespace.items()
        if not k.startswith("__") and not callable(v) and not isinstance(v, type)
    }
    for _ in range(2):  # the second load reuses the pieces
        got = {k: v for k, v in Config.fromfile(path).to_dict().items() if not callable(v)}
        got.pop("base_value", None)
        assert got == expected


@pytest.mark.parametrize("head", ["", READ_BASE])
def test_a_statement_shared_by_two_files_names_each_files_lines(tmp_path, head):
    (tmp_path / "base.py").write_text("base_value = 1\n")
    shared = "model = dict(depth=undefined_name)\n"
    (tmp_path / "a.py").write_text(head + "x = 1\n" + shared)
    (tmp_path / "b.py").write_text(head + "x = 1\ny = 2\n\n" + shared)
    lines = len(head.splitlines())
    for name, line in (("a.py", lines + 2), ("b.py", lines + 4), ("a.py", lines + 2)):
        with pytest.raises(ConfigError, match="undefined_name") as info:
            Config.fromfile(tmp_path / name)
        assert info.value.filename == str(tmp_path / name)
        assert info.value.lineno == line


def test_a_function_of_a_config_names_its_file_in_tracebacks(tmp_path):
    body = "def fails():\n    raise ValueError('from the config')\nmodel = dict(fn=fails)\n"
    for name, prefix in (("a.py", ""), ("b.py", "x = 1\n")):
        (tmp_path / name).write_text(prefix + body)
        fn = Config.fromfile(tmp_path / name).model.fn
        with pytest.raises(ValueError) as info:
            fn()
        frame = traceback.extract_tb(info.value.__traceback__)[-1]
        assert frame.filename == str(tmp_path / name)
        assert frame.lineno == 2 + len(prefix.splitlines())


def test_a_syntax_error_after_good_statements_names_its_line(tmp_path):
    (tmp_path / "cfg.py").write_text("a = 1\nb = 2\nc = (\n")
    with pytest.raises(SyntaxError) as info:
        Config.fromfile(tmp_path / "cfg.py")
    assert info.value.filename == str(tmp_path / "cfg.py") and info.value.lineno == 3


def test_lazy_imports_of_one_head_name_each_file(tmp_path):
    head = "from some_missing_pkg.models import Net\n"
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(head + f"model = dict(type=Net, name='{name}')\n")
    for name in ("a.py", "b.py"):
        cfg = Config.fromfile(tmp_path / name)
        assert cfg.to_dict()["model"]["type"] == "some_missing_pkg.models.Net"
        with pytest.raises(ImportError, match=f"{name}, line 1"):
            cfg.model.type  # noqa: B018


def test_an_import_in_a_string_or_a_block_of_the_rest(tmp_path):
    (tmp_path / "base.py").write_text("depth = 1\n")
    rest = (
        "note = 'import this, with that'\n"
        "if True:\n    from some_missing_pkg import Head\n"
        "model = dict(head=Head, depth=depth)\n"
    )
    (tmp_path / "cfg.py").write_text(READ_BASE + rest)
    assert Config.fromfile(tmp_path / "cfg.py").to_dict() == {
        "depth": 1,
        "note": "import this, with that",
        "model": {"head": "some_missing_pkg.Head", "depth": 1},
    }


def test_base_assigned_with_other_statements_on_its_line(tmp_path):
    (tmp_path / "base.py").write_text("a = 1\n")
    (tmp_path / "cfg.py").write_text("x = 2; _base_ = ['base.py']; y = 3\nz = _base_.a + x + y\n")
    assert Config.fromfile(tmp_path / "cfg.py").to_dict() == {"a": 1, "x": 2, "y": 3, "z": 6}
    # the first `_base_ = ...` names the bases, as in a parse of the whole file
    (tmp_path / "cfg.py").write_text("_base_ = 'base.py'\n_base_ = 'other.py'\nb = _base_.a\n")
    assert Config.fromfile(tmp_path / "cfg.py").to_dict() == {"a": 1, "b": 1}
