"""Local path helpers: mkdir_or_exist, scandir, symlink, check_file_exist, is_filepath, fopen,
is_abs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from treadle.runner.utils import (
    check_file_exist,
    fopen,
    is_abs,
    is_filepath,
    mkdir_or_exist,
    scandir,
    symlink,
)


@pytest.fixture
def tree(tmp_path):
    for name in ["a/x.py", "a/b/y.PY", "z.txt", "a/b/.hidden.py", ".folder/q.py"]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    return tmp_path


def test_is_filepath():
    assert is_filepath("a") and is_filepath(Path("a"))
    assert not is_filepath(1) and not is_filepath(b"a")


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/a", True), ("a", False), ("./a", False), ("s3://bucket/a", True), ("http://x", True)],
)
def test_is_abs(path, expected):
    assert is_abs(path) is expected


def test_mkdir_or_exist_makes_parents_and_accepts_existing(tmp_path):
    mkdir_or_exist(tmp_path / "a" / "b")
    mkdir_or_exist(str(tmp_path / "a" / "b"))
    mkdir_or_exist("")  # the current folder: nothing to do
    assert (tmp_path / "a" / "b").is_dir()


def test_mkdir_or_exist_under_a_file_fails(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(NotADirectoryError, match="f/x"):
        mkdir_or_exist(tmp_path / "f" / "x")


def test_scandir_lists_files_relative_to_the_folder(tree):
    assert sorted(scandir(tree)) == ["z.txt"]
    assert sorted(scandir(str(tree), recursive=True)) == [
        os.path.join(".folder", "q.py"),
        os.path.join("a", "b", "y.PY"),
        os.path.join("a", "x.py"),
        "z.txt",
    ]


def test_scandir_by_suffix(tree):
    assert sorted(scandir(tree, ".py", recursive=True)) == [
        os.path.join(".folder", "q.py"),
        os.path.join("a", "x.py"),
    ]
    assert sorted(scandir(tree, (".py", ".txt"), recursive=True))[-1] == "z.txt"
    insensitive = sorted(scandir(tree, ".py", recursive=True, case_sensitive=False))
    assert os.path.join("a", "b", "y.PY") in insensitive
    assert len(list(scandir(tree, (".PY",), recursive=True, case_sensitive=False))) == 3


def test_scandir_errors(tree):
    with pytest.raises(TypeError, match='"suffix" must be a string or tuple of strings, got 3'):
        scandir(tree, 3)
    with pytest.raises(TypeError, match='"dir_path" must be a string or Path object, got int'):
        scandir(3)
    with pytest.raises(FileNotFoundError, match="nope"):
        list(scandir(tree / "nope"))


def test_symlink_replaces_a_link_unless_told_not_to(tree):
    link = tree / "link"
    symlink(tree / "z.txt", link)
    assert os.readlink(link) == str(tree / "z.txt")
    symlink(tree / "a", link)
    assert os.readlink(link) == str(tree / "a")
    with pytest.raises(FileExistsError, match="link"):
        symlink(tree / "z.txt", link, overwrite=False)


def test_symlink_never_removes_a_folder(tree):
    with pytest.raises(FileExistsError):
        symlink(tree / "z.txt", tree / "a")
    assert (tree / "a" / "x.py").is_file()


def test_check_file_exist(tree):
    check_file_exist(tree / "z.txt")
    with pytest.raises(FileNotFoundError, match=r'file ".*nope" does not exist'):
        check_file_exist(str(tree / "nope"))
    with pytest.raises(FileNotFoundError, match=r"missing .*/a!"):
        check_file_exist(str(tree / "a"), "missing {}!")  # a folder is not a file


def test_fopen(tree):
    with fopen(tree / "z.txt") as file:
        assert file.read() == "z.txt"
    with fopen(str(tree / "new.txt"), "w") as file:
        file.write("hi")
    assert (tree / "new.txt").read_text() == "hi"
    with pytest.raises(ValueError, match="`filepath` should be a string or a Path, got int: 3"):
        fopen(3)
