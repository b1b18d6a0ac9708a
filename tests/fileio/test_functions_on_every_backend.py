"""Every function of treadle.fileio, on a local directory, on memory:// and on S3 (moto).

Each test runs once per backend, with ``root``: a directory that exists and is empty.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import uuid

import pytest

from treadle import fileio

BACKEND_NAMES = {"local": "LocalBackend", "memory": "FsspecBackend", "s3": "S3Backend"}


@pytest.fixture(params=sorted(BACKEND_NAMES))
def kind(request) -> str:
    return request.param


@pytest.fixture
def root(kind, tmp_path, request) -> str:
    if kind == "local":
        directory = tmp_path / "root"
        directory.mkdir()
        return str(directory)
    if kind == "memory":
        return f"memory://treadle-{uuid.uuid4().hex}"
    return f"s3://{request.getfixturevalue('bucket')}/root"


def path(root: str, *parts: str) -> str:
    return fileio.join_path(root, *parts)


def test_bytes_and_text_round_trip(root):
    fileio.put(b"\x00binary\xff", path(root, "a.bin"))
    fileio.put_text("héllo wörld", path(root, "nested", "deeper", "a.txt"))
    assert fileio.get(path(root, "a.bin")) == b"\x00binary\xff"
    assert fileio.get_text(path(root, "nested", "deeper", "a.txt")) == "héllo wörld"
    fileio.put_text("ünïcode", path(root, "latin.txt"), encoding="latin-1")
    assert fileio.get(path(root, "latin.txt")) == "ünïcode".encode("latin-1")
    assert fileio.get_text(path(root, "latin.txt"), encoding="latin-1") == "ünïcode"


def test_put_replaces_a_whole_file(root):
    fileio.put(b"first version, longer", path(root, "f.bin"))
    fileio.put(b"second", path(root, "f.bin"))
    assert fileio.get(path(root, "f.bin")) == b"second"


def test_exists_isfile_isdir(root):
    fileio.put(b"x", path(root, "dir", "file.txt"))
    assert fileio.exists(path(root, "dir", "file.txt"))
    assert fileio.isfile(path(root, "dir", "file.txt"))
    assert not fileio.isdir(path(root, "dir", "file.txt"))
    assert fileio.exists(path(root, "dir"))
    assert fileio.isdir(path(root, "dir"))
    assert not fileio.isfile(path(root, "dir"))
    assert not fileio.exists(path(root, "missing"))
    assert not fileio.isfile(path(root, "missing"))
    assert not fileio.isdir(path(root, "missing"))


def test_join_path(root, kind):
    joined = fileio.join_path(root, "a", "b.txt")
    if kind == "local":
        assert joined == os.path.join(root, "a", "b.txt")
    else:
        assert joined == f"{root}/a/b.txt"
        assert fileio.join_path(root + "/", "/a/", "b.txt") == f"{root}/a/b.txt"


def test_get_local_path(root, kind):
    fileio.put(b"weights", path(root, "model.pth"))
    with fileio.get_local_path(path(root, "model.pth")) as local:
        assert pathlib.Path(local).read_bytes() == b"weights"
        assert local.endswith("model.pth")
    assert os.path.exists(local) == (kind == "local")  # only temporary copies are removed


def test_copyfile(root):
    fileio.put(b"data", path(root, "src.txt"))
    assert fileio.copyfile(path(root, "src.txt"), path(root, "dst.txt")) == path(root, "dst.txt")
    fileio.put(b"x", path(root, "into", "placeholder"))
    into = fileio.copyfile(path(root, "src.txt"), path(root, "into"))
    assert into == path(root, "into", "src.txt")
    assert fileio.get(path(root, "dst.txt")) == fileio.get(into) == b"data"
    with pytest.raises(shutil.SameFileError, match=r"src\.txt"):
        fileio.copyfile(path(root, "src.txt"), path(root, "src.txt"))


def test_copytree(root):
    fileio.put(b"1", path(root, "tree", "a.txt"))
    fileio.put(b"2", path(root, "tree", "sub", "b.txt"))
    assert fileio.copytree(path(root, "tree"), path(root, "copy")) == path(root, "copy")
    assert fileio.get(path(root, "copy", "a.txt")) == b"1"
    assert fileio.get(path(root, "copy", "sub", "b.txt")) == b"2"
    with pytest.raises(FileExistsError, match="copy"):
        fileio.copytree(path(root, "tree"), path(root, "copy"))


def test_copy_from_local(root, tmp_path):
    local = tmp_path / "local"
    (local / "sub").mkdir(parents=True)
    (local / "a.txt").write_bytes(b"a")
    (local / "sub" / "b.txt").write_bytes(b"b")
    dst = fileio.copyfile_from_local(local / "a.txt", path(root, "up.txt"))
    assert fileio.get(dst) == b"a"
    fileio.put(b"x", path(root, "updir", "placeholder"))
    assert fileio.copyfile_from_local(local / "a.txt", path(root, "updir")) == path(
        root, "updir", "a.txt"
    )
    assert fileio.copytree_from_local(local, path(root, "uptree")) == path(root, "uptree")
    assert fileio.get(path(root, "uptree", "sub", "b.txt")) == b"b"
    with pytest.raises(FileExistsError, match="uptree"):
        fileio.copytree_from_local(local, path(root, "uptree"))


def test_copy_to_local(root, tmp_path):
    fileio.put(b"a", path(root, "down", "a.txt"))
    fileio.put(b"b", path(root, "down", "sub", "b.txt"))
    out = tmp_path / "out"
    assert fileio.copyfile_to_local(path(root, "down", "a.txt"), str(out / "a.txt")) == str(
        out / "a.txt"
    )
    assert (out / "a.txt").read_bytes() == b"a"
    into = fileio.copyfile_to_local(path(root, "down", "sub", "b.txt"), str(out))
    assert into == str(out / "b.txt")
    assert (out / "b.txt").read_bytes() == b"b"
    assert fileio.copytree_to_local(path(root, "down"), str(tmp_path / "tree")) == str(
        tmp_path / "tree"
    )
    assert (tmp_path / "tree" / "sub" / "b.txt").read_bytes() == b"b"


def test_remove_and_rmtree(root):
    fileio.put(b"1", path(root, "gone", "a.txt"))
    fileio.put(b"2", path(root, "gone", "sub", "b.txt"))
    fileio.remove(path(root, "gone", "a.txt"))
    assert not fileio.exists(path(root, "gone", "a.txt"))
    with pytest.raises(IsADirectoryError, match="rmtree"):
        fileio.remove(path(root, "gone", "sub"))
    fileio.rmtree(path(root, "gone"))
    assert not fileio.exists(path(root, "gone"))
    assert not fileio.exists(path(root, "gone", "sub", "b.txt"))


def test_copy_if_symlink_fails(root, kind):
    fileio.put(b"1", path(root, "target.txt"))
    fileio.put(b"2", path(root, "dir", "in.txt"))
    linked = fileio.copy_if_symlink_fails(path(root, "target.txt"), path(root, "link.txt"))
    assert linked == (kind == "local")
    assert fileio.get(path(root, "link.txt")) == b"1"
    fileio.copy_if_symlink_fails(path(root, "dir"), path(root, "dirlink"))
    assert fileio.get(path(root, "dirlink", "in.txt")) == b"2"


def test_list_dir_or_file(root):
    for name in ("a.txt", "b.json", "sub/c.txt", "sub/deep/d.txt", "other/e.bin"):
        fileio.put(b"x", path(root, *name.split("/")))

    def listed(**kwargs) -> set[str]:
        return {p.replace(os.sep, "/") for p in fileio.list_dir_or_file(root, **kwargs)}

    assert listed() == {"a.txt", "b.json", "sub", "other"}
    assert listed(list_dir=False) == {"a.txt", "b.json"}
    assert listed(list_file=False) == {"sub", "other"}
    assert listed(list_dir=False, suffix=".txt") == {"a.txt"}
    assert listed(list_dir=False, suffix=(".txt", ".bin"), recursive=True) == {
        "a.txt",
        "sub/c.txt",
        "sub/deep/d.txt",
        "other/e.bin",
    }
    assert listed(recursive=True) == {
        "a.txt",
        "b.json",
        "sub",
        "sub/c.txt",
        "sub/deep",
        "sub/deep/d.txt",
        "other",
        "other/e.bin",
    }
    assert listed(list_file=False, recursive=True) == {"sub", "sub/deep", "other"}
    assert {p.replace(os.sep, "/") for p in fileio.list_dir_or_file(path(root, "sub"))} == {
        "c.txt",
        "deep",
    }


def test_list_dir_or_file_rejects_bad_arguments(root):
    fileio.put(b"x", path(root, "a.txt"))
    with pytest.raises(TypeError, match="`suffix` should be None when `list_dir` is True"):
        list(fileio.list_dir_or_file(root, suffix=".txt"))
    with pytest.raises(TypeError, match=r"`suffix` must be a string or tuple of strings, got \["):
        list(fileio.list_dir_or_file(root, list_dir=False, suffix=[".txt"]))


def test_load_and_dump(root):
    data = {"name": "run", "lrs": [0.1, 0.01], "nested": {"ok": True}}
    for extension in ("json", "yaml", "yml", "pkl", "pickle"):
        fileio.dump(data, path(root, f"obj.{extension}"))
        assert fileio.load(path(root, f"obj.{extension}")) == data
    fileio.dump(data, path(root, "noext"), file_format="json")
    assert fileio.load(path(root, "noext"), file_format="json") == data


def test_list_and_dict_from_file(root):
    fileio.put_text("cat\ndog\r\nbird\nfish\n", path(root, "classes.txt"))
    assert fileio.list_from_file(path(root, "classes.txt")) == ["cat", "dog", "bird", "fish"]
    assert fileio.list_from_file(path(root, "classes.txt"), prefix="c_", offset=1, max_num=2) == [
        "c_dog",
        "c_bird",
    ]
    fileio.put_text("1 cat\n2 dog puppy\n", path(root, "labels.txt"))
    assert fileio.dict_from_file(path(root, "labels.txt"), key_type=int) == {
        1: "cat",
        2: ["dog", "puppy"],
    }


def test_missing_file_names_path_and_backend(root, kind):
    missing = path(root, "missing.txt")
    backend = BACKEND_NAMES[kind]
    for call in (fileio.get, fileio.get_text, fileio.remove, fileio.list_from_file):
        with pytest.raises(FileNotFoundError, match=rf"\({backend}.*missing\.txt") as info:
            call(missing)
        assert info.value.filename == missing
    with pytest.raises(FileNotFoundError, match=rf"\({backend}.*missing\.json"):
        fileio.load(path(root, "missing.json"))
    with pytest.raises(FileNotFoundError, match=backend), fileio.get_local_path(missing):
        pass
    with pytest.raises(FileNotFoundError, match=backend):
        fileio.copyfile(missing, path(root, "x.txt"))
    with pytest.raises(FileNotFoundError, match=backend):
        fileio.rmtree(path(root, "missing_dir"))
    with pytest.raises(FileNotFoundError, match=backend):
        list(fileio.list_dir_or_file(path(root, "missing_dir")))


def test_presigned_url_where_the_backend_cannot(root, kind):
    if kind == "s3":
        pytest.skip("S3 presigns: see test_s3.py")
    fileio.put(b"x", path(root, "a.txt"))
    with pytest.raises(NotImplementedError, match=BACKEND_NAMES[kind]):
        fileio.generate_presigned_url(path(root, "a.txt"))
