"""Config files are read as bytes and decoded only when they changed: what a load sees must be
what ``open(path, encoding='utf-8').read()`` gives, whatever the file holds."""

import pytest

from treadle.config import Config

CHILD = "from treadle.config import read_base\nwith read_base():\n    from .base import *\n"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_windows_and_old_mac_line_endings_read_as_newlines(tmp_path, newline):
    text = "# é\nmodel = dict(\n    depth=50,\n    name='a\\tb')\n"
    path = tmp_path / "cfg.py"
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    cfg = Config.fromfile(path)
    assert cfg.to_dict() == {"model": {"depth": 50, "name": "a\tb"}}
    assert path.read_text(encoding="utf-8") == text  # what open() gives
    assert cfg.text.endswith(text) and "\r" not in cfg.text  # a text-style config: path + text


def test_an_edit_of_line_endings_alone_is_seen(tmp_path):
    (tmp_path / "base.py").write_bytes(b"s = '''a\nb'''\n")
    (tmp_path / "cfg.py").write_text(CHILD)
    assert Config.fromfile(tmp_path / "cfg.py").s == "a\nb"
    (tmp_path / "base.py").write_bytes(b"s = '''a\r\nb'''\r\n")
    assert Config.fromfile(tmp_path / "cfg.py").s == "a\nb"
    (tmp_path / "base.py").write_bytes(b"s = '''a\\rb'''\n")
    assert Config.fromfile(tmp_path / "cfg.py").s == "a\rb"


def test_a_config_larger_than_one_read_is_read_whole(tmp_path):
    values = list(range(12_000))  # about 73 KB of text: more than one 64 KiB read
    (tmp_path / "base.py").write_text(f"values = {values!r}\nlast = 'end'\n")
    (tmp_path / "cfg.py").write_text(CHILD + "count = len(values)\n")
    cfg = Config.fromfile(tmp_path / "cfg.py")
    assert (cfg.count, cfg["values"][-1], cfg.last) == (12_000, 11_999, "end")


def test_a_file_that_is_not_utf8_is_refused_as_open_refuses_it(tmp_path):
    (tmp_path / "base.py").write_bytes(b"name = '\xff'\n")
    (tmp_path / "cfg.py").write_text(CHILD)
    with pytest.raises(UnicodeDecodeError, match="utf-8"):
        Config.fromfile(tmp_path / "cfg.py")


def test_a_base_that_is_a_folder_is_an_error_naming_it(tmp_path):
    (tmp_path / "base.py").mkdir()
    (tmp_path / "cfg.py").write_text(CHILD)
    with pytest.raises(FileNotFoundError, match=r"base config \.base not found: .*base\.py"):
        Config.fromfile(tmp_path / "cfg.py")
