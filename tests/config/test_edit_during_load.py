"""A file edited while a load runs: each file is read once per load, and what is kept for the
process (compiled statements, heads, the text of the last read) is found by the text just read,
so the load goes on with the edited content, or stops with an error naming the edited file;
never with a stale copy of what the file held before."""

import pytest

from treadle.config import Config, ConfigError

# Rewrites a.py next to it, keeping its size, while the load that runs it goes on.
REWRITE = (
    "import os\n"
    "target = os.path.join(os.path.dirname(__file__), 'a.py')\n"
    "open(target, 'w').write({new!r})\n"
)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    return tmp_path


def test_a_text_style_base_edited_by_an_earlier_base(folder):
    (folder / "b1.py").write_text(REWRITE.format(new="x = 2\n") + "w = 1\n")
    (folder / "child.py").write_text("_base_ = ['./b1.py', './a.py']\ny = _base_.x\n")
    Config.fromfile(folder / "a.py")  # compiled and read once before, as "x = 1"
    assert Config.fromfile(folder / "child.py").to_dict()["y"] == 2
    (folder / "a.py").write_text("x = 1\n")
    assert Config.fromfile(folder / "child.py").y == 2


def test_a_pure_base_edited_between_two_imports_of_it(folder):
    head = "from treadle.config import read_base\nwith read_base():\n"
    rewrite = REWRITE.format(new="x = 3\n")
    (folder / "b1.py").write_text(head + "    from .a import x as x1\n" + rewrite)
    (folder / "b2.py").write_text(head + "    from .a import x as x2\n")
    (folder / "child.py").write_text(
        head + "    from .b1 import x1\n    from .b2 import x2\nboth = [x1, x2]\n"
    )
    assert Config.fromfile(folder / "child.py").to_dict()["both"] == [1, 3]
    # a.py holds "x = 3" now: both imports read it
    assert Config.fromfile(folder / "child.py").to_dict()["both"] == [3, 3]


def test_a_broken_edit_during_a_load_is_an_error_naming_the_file(folder):
    (folder / "b1.py").write_text(REWRITE.format(new="x = (\n") + "w = 1\n")
    (folder / "child.py").write_text("_base_ = ['./b1.py', './a.py']\n")
    with pytest.raises(ConfigError) as info:
        Config.fromfile(folder / "child.py")
    assert isinstance(info.value, SyntaxError)
    assert info.value.filename == str(folder / "a.py")


def test_a_statement_edited_to_one_another_file_holds(folder):
    # The edit makes a.py's statement the text of one compiled for b.py: a.py's own line.
    (folder / "b.py").write_text("\n\nx = undefined_name\n")
    with pytest.raises(ConfigError):
        Config.fromfile(folder / "b.py")
    (folder / "a.py").write_text("x = undefined_name\n")
    with pytest.raises(ConfigError) as info:
        Config.fromfile(folder / "a.py")
    assert (info.value.filename, info.value.lineno) == (str(folder / "a.py"), 1)
