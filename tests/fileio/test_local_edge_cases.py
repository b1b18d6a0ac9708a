"""Edge cases of local paths where treadle.fileio behaves as MMEngine 0.10 does (the parity
test, run with MMEngine installed, compares them directly)."""

from __future__ import annotations

import os
import pathlib

import pytest

from treadle import fileio


@pytest.fixture
def tree(tmp_path) -> pathlib.Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("b")
    (tmp_path / "a.txt").write_text("a")
    return tmp_path


def test_listing_leaves_out_what_is_neither_file_nor_directory(tree):
    os.symlink(tree / "nowhere", tree / "broken")
    os.mkfifo(tree / "fifo")
    os.symlink(tree / "a.txt", tree / "alink")
    assert sorted(fileio.list_dir_or_file(tree, recursive=True)) == [
        "a.txt",
        "alink",
        "sub",
        os.path.join("sub", "b.txt"),
    ]


@pytest.mark.parametrize(
    "call",
    [
        lambda path, tree: list(fileio.list_dir_or_file(path)),
        lambda path, tree: fileio.rmtree(path),
        lambda path, tree: fileio.copytree(path, tree / "copy"),
    ],
    ids=["list_dir_or_file", "rmtree", "copytree"],
)
def test_a_file_where_a_directory_is_needed(tree, call):
    with pytest.raises(NotADirectoryError, match=r"Not a directory \(LocalBackend\).*a\.txt"):
        call(tree / "a.txt", tree)
    assert (tree / "a.txt").read_text() == "a"
    assert not (tree / "copy").exists()


def test_put_text_needs_a_str(tree):
    with pytest.raises(TypeError, match="put_text writes a str, not bytes; use put for bytes"):
        fileio.put_text(b"bytes", tree / "x.txt")
    assert not (tree / "x.txt").exists()


def test_get_local_path_yields_a_str(tree):
    with fileio.get_local_path(tree / "a.txt") as local:
        assert local == str(tree / "a.txt")
        assert isinstance(local, str)


def test_unknown_backend_is_a_value_error_and_a_key_error():
    with pytest.raises(KeyError) as caught:
        fileio.get("nosuchprotocol://a/b")
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, fileio.UnknownBackendError)
    assert str(caught.value).startswith("no file backend serves the prefix 'nosuchprotocol'")
    with pytest.raises(KeyError, match="backend_args names the backend 'nope'"):
        fileio.get_file_backend(backend_args={"backend": "nope"})


def test_only_line_feeds_end_lines(tree):
    (tree / "names.txt").write_bytes("a\x0cb\r\nc\u2028d\n\ne".encode())
    assert fileio.list_from_file(tree / "names.txt") == ["a\x0cb", "c\u2028d", "", "e"]
    (tree / "labels.txt").write_bytes(b"1 a\x0cb\r\n2 c\n")
    assert fileio.dict_from_file(tree / "labels.txt", key_type=int) == {1: ["a", "b"], 2: "c"}


def test_a_negative_offset_counts_as_zero(tree):
    (tree / "names.txt").write_text("a\nb\nc\n")
    assert fileio.list_from_file(tree / "names.txt", offset=-2) == ["a", "b", "c"]
    assert fileio.list_from_file(tree / "names.txt", offset=-2, max_num=1) == ["a"]


@pytest.mark.parametrize("error", [OSError("no links here"), RuntimeError("odd filesystem")])
def test_copy_if_symlink_fails_copies_whatever_stops_the_link(tree, monkeypatch, error):
    # MMEngine copies on any failure of os.symlink, not only on an OSError.
    def refuse(src, dst):
        raise error

    monkeypatch.setattr(os, "symlink", refuse)
    assert fileio.copy_if_symlink_fails(tree / "a.txt", tree / "copy.txt") is False
    assert (tree / "copy.txt").read_text() == "a" and not (tree / "copy.txt").is_symlink()
    assert fileio.copy_if_symlink_fails(str(tree / "sub"), str(tree / "subcopy")) is False
    assert (tree / "subcopy" / "b.txt").read_text() == "b"


def test_parse_uri_prefix_of_mmengine_io(tree):
    from treadle.fileio.io import _parse_uri_prefix

    assert _parse_uri_prefix(tree / "a.txt") == ""
    assert _parse_uri_prefix(str(tree)) == ""
    assert _parse_uri_prefix(uri="https://example.com/a.png") == "https"
    assert _parse_uri_prefix("s3://bucket/a.png") == "s3"
    assert _parse_uri_prefix("cluster:s3://bucket/a.png") == "s3"
    # A TypeError, and the AssertionError MMEngine raises there.
    for bad in (None, []):
        with pytest.raises(AssertionError, match="uri must be a str or a path, got"):
            _parse_uri_prefix(bad)
    with pytest.raises(TypeError, match="uri must be a str or a path, got NoneType None"):
        _parse_uri_prefix(None)
