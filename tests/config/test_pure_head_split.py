"""A pure-Python config is compiled as its parsed head (imports, ``with read_base():``) and the
rest compiled from text: whatever the rest holds, loading must mean what the whole file means,
and errors must name the file's own lines."""

import pytest

from treadle.config import Config, ConfigError

HEAD = "from treadle.config import read_base\nwith read_base():\n    from .base import *\n"


@pytest.fixture
def write(tmp_path):
    (tmp_path / "base.py").write_text("model = dict(depth=1)\n")

    def write_config(text):
        path = tmp_path / "cfg.py"
        path.write_text(text)
        return path

    return write_config


@pytest.mark.parametrize(
    ("rest", "expected"),
    [
        # the words the split looks for, in strings and comments: the whole file is parsed
        ("note = 'import this, with that'  # import\n", {"note": "import this, with that"}),
        ("doc = '''\nimport os\n'''\n", {"doc": "\nimport os\n"}),
        # a top-level import after the first values is rewritten like the others
        (
            "x = 1\nfrom pkg.nets import Net\nnet = dict(type=Net)\n",
            {"x": 1, "net": {"type": "pkg.nets.Net"}},
        ),
        # an import inside a block stays a real import (stdlib), as before
        ("if True:\n    import json\n    name = json.__name__\n", {"name": "json"}),
        # a closing bracket at column 0 ends the head's import, not the head
        (
            "from pkg.nets import (\n    Net,\n)\nnet = dict(type=Net)\n",
            {"net": {"type": "pkg.nets.Net"}},
        ),
        # words that only start like the keywords
        ("model.depth = 2\nwith_bbox = True\nimported = 1\n", {"with_bbox": True, "imported": 1}),
    ],
)
def test_the_rest_means_what_the_whole_file_means(write, rest, expected):
    cfg = Config.fromfile(write(HEAD + rest))
    assert cfg.to_dict() == {"model": {"depth": 2 if "depth = 2" in rest else 1}, **expected}


def test_a_future_import_applies_to_the_rest(write):
    text = "from __future__ import annotations\n" + HEAD + "x: undefined_name = 2\n"
    assert Config.fromfile(write(text)).x == 2


@pytest.mark.parametrize(
    ("rest", "error", "line"),
    [
        ("x = 1\ny = dict(\n", SyntaxError, 5),
        ("x = 1\ny = undefined_name\n", NameError, 5),
        ("x = 1\n\nwith open('f') as f:\n    pass\n", ConfigError, 6),
        ("x = 1\n_base_ = ['a.py']\n", ConfigError, 5),
    ],
)
def test_errors_in_the_rest_name_its_line(write, rest, error, line):
    path = write(HEAD + rest)
    with pytest.raises(error) as caught:
        Config.fromfile(path)
    assert isinstance(caught.value, ConfigError)
    assert f"{path}:{line}" in str(caught.value)
