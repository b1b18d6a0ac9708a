"""The deliberate differences from MMEngine (README.md, "Differences from MMEngine 0.10"),
each test asserting both behaviours.

treadle.fileio next to mmengine.fileio 0.10 on local files (see tests/support/fileio_parity.py).
Skipped without MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import io
import os
import pathlib
import pickle

import pytest

pytest.importorskip("mmengine")


from fileio_parity import (  # in tests/support, on pytest's sys.path
    Raised,
    mm_backend_registry,
    mm_fileio,
    outcome,
    p,
    restore_mmengine_registries,  # noqa: F401 (autouse fixture)
    run_on_copies,
    tr_fileio,
)


def both(scenario, tmp_path):
    outcomes = run_on_copies(scenario, tmp_path)
    return outcomes["mmengine"], outcomes["treadle"]


def test_deliberate_get_local_path_of_a_missing_file(tmp_path):
    # MMEngine yields the missing path and lets the caller fail later; treadle says at once.
    def scenario(f, r):
        with f.get_local_path(p(r, "missing")) as local:
            return local

    theirs, ours = both(scenario, tmp_path)
    assert theirs == "<root>/missing"
    assert isinstance(ours, Raised) and isinstance(ours.error, FileNotFoundError)


def test_deliberate_copyfile_to_local_picks_the_backend_of_src(tmp_path):
    # MMEngine picks the backend of the (local) destination, which cannot read remote files.
    tr_fileio.put(b"remote", "memory://treadle-parity/remote.bin")

    theirs = outcome(
        lambda: mm_fileio.copyfile_to_local("memory://treadle-parity/remote.bin", str(tmp_path)),
        str(tmp_path),
    )
    ours = tr_fileio.copyfile_to_local("memory://treadle-parity/remote.bin", str(tmp_path))
    assert isinstance(theirs, Raised) and isinstance(theirs.error, FileNotFoundError)
    assert ours == str(tmp_path / "remote.bin")
    assert (tmp_path / "remote.bin").read_bytes() == b"remote"
    tr_fileio.rmtree("memory://treadle-parity")


def test_deliberate_pickle_protocol():
    # MMEngine writes protocol 2; treadle writes pickle's default protocol. Both read either.
    obj = {"a": [1, 2.5, None]}
    theirs = mm_fileio.dump(obj, file_format="pkl")
    ours = tr_fileio.dump(obj, file_format="pkl")
    assert theirs[:2] == b"\x80\x02"
    assert ours[:2] == bytes([0x80, pickle.DEFAULT_PROTOCOL])
    assert tr_fileio.load(io.BytesIO(theirs), file_format="pkl") == obj
    assert mm_fileio.load(io.BytesIO(ours), file_format="pkl") == obj


def test_deliberate_generate_presigned_url_on_local_files(tmp_path):
    # MMEngine's docs promise NotImplementedError; its LocalBackend has no such method at all.
    theirs, ours = both(lambda f, r: f.generate_presigned_url(p(r, "a.txt")), tmp_path)
    assert isinstance(theirs.error, AttributeError)
    assert isinstance(ours.error, NotImplementedError)
    assert "LocalBackend does not support generate_presigned_url" in str(ours.error)


def test_deliberate_remove_removes_links_themselves(tmp_path):
    # MMEngine follows the link first: a dangling link "does not exist", and a link to a
    # directory "is a directory"; treadle removes the link, as os.remove does.
    def scenario(f, r):
        os.symlink(p(r, "nowhere"), p(r, "broken"))
        results = []
        for link in ("broken", "sublink"):
            try:
                results.append(f.remove(p(r, link)))
            except OSError as error:
                results.append(type(error).__name__)
        return results

    theirs, ours = both(scenario, tmp_path)
    assert theirs == ("list", ["FileNotFoundError", "IsADirectoryError"])
    assert ours == ("list", [("NoneType", None), ("NoneType", None)])
    assert not (tmp_path / "treadle" / "broken").is_symlink()
    assert not (tmp_path / "treadle" / "sublink").exists()
    assert (tmp_path / "treadle" / "sub").is_dir()


def test_deliberate_copyfile_makes_missing_parents(tmp_path):
    # Like put, and like copies on object stores, where directories need not exist.
    theirs, ours = both(lambda f, r: f.copyfile(p(r, "a.txt"), p(r, "new", "dir", "a")), tmp_path)
    assert isinstance(theirs.error, FileNotFoundError)
    assert ours == "<root>/new/dir/a"
    assert (tmp_path / "treadle" / "new" / "dir" / "a").read_bytes() == b"alpha\n"


def test_deliberate_dict_from_file_blank_and_one_column_lines(tmp_path):
    # MMEngine asserts (AssertionError, gone under python -O) on a blank line as on a line
    # with one column; treadle skips blank lines and raises ValueError naming the line.
    def blank(f, r):
        pathlib.Path(r, "x.txt").write_text("a 1\n\nb 2\n")
        return f.dict_from_file(p(r, "x.txt"))

    def one_column(f, r):
        pathlib.Path(r, "x.txt").write_text("a 1\nb\n")
        return f.dict_from_file(p(r, "x.txt"))

    theirs, ours = both(blank, tmp_path / "blank")
    assert isinstance(theirs.error, AssertionError)
    assert ours == {"a": "1", "b": "2"}
    theirs, ours = both(one_column, tmp_path / "one")
    assert isinstance(theirs.error, AssertionError)
    assert isinstance(ours.error, ValueError)
    assert "line 2" in str(ours.error)


def test_deliberate_backend_instances_by_class_and_arguments(tmp_path):
    # MMEngine keys its singletons by prefix and json.dumps(backend_args): the same backend
    # named by prefix and by name, or with arguments in another order, is made twice.
    def scenario(f, r):
        by_prefix = f.get_file_backend(r, enable_singleton=True)
        by_name = f.get_file_backend(r, backend_args={"backend": "local"}, enable_singleton=True)
        return by_prefix is by_name

    theirs, ours = both(scenario, tmp_path)
    assert theirs == ("bool", False)
    assert ours == ("bool", True)


def test_deliberate_register_backend_checks_before_registering():
    # MMEngine registers the name, then fails on a taken prefix, leaving the name registered.
    for fileio, registry in (
        (mm_fileio, mm_backend_registry.backends),
        (tr_fileio, tr_fileio.backends.backends),
    ):

        class KeyValueBackend(fileio.BaseStorageBackend):
            def get(self, filepath):
                return b""

            def get_text(self, filepath, encoding="utf-8"):
                return ""

        with pytest.raises(ValueError, match="already registered"):
            fileio.register_backend("kvtest", KeyValueBackend, prefixes="")
        assert ("kvtest" in registry) == (fileio is mm_fileio)


def _text_handler(f):
    class TextHandler(f.BaseFileHandler):
        def load_from_fileobj(self, file, **kwargs):
            return file.read()

        def dump_to_fileobj(self, obj, file, **kwargs):
            file.write(obj)

        def dump_to_str(self, obj, **kwargs):
            return obj

    return TextHandler


# Where MMEngine raises, treadle accepts: a tuple of formats, keyword arguments to json.load,
# frozensets in json, 'disk' as a backend name (the name MMEngine's FileClient used).
ACCEPTS_MORE = {
    "tuple_of_formats": (
        lambda f, r: (
            f.register_handler(("t1", "t2"))(_text_handler(f))
            and f.load(p(r, "a.txt"), file_format="t2")
        ),
        "alpha\n",
    ),
    "json_load_kwargs": (
        lambda f, r: f.load(p(r, "c.json"), parse_int=str),
        {"k": ("list", ["1", "2"]), "s": "x"},
    ),
    "json_frozenset": (lambda f, r: f.dump(frozenset([1]), file_format="json"), "[1]"),
    "disk_backend_name": (
        lambda f, r: type(f.get_file_backend(backend_args={"backend": "disk"})).__name__,
        "LocalBackend",
    ),
}


@pytest.mark.parametrize("name", sorted(ACCEPTS_MORE))
def test_deliberate_accepts_more(name, tmp_path):
    scenario, expected = ACCEPTS_MORE[name]
    theirs, ours = both(scenario, tmp_path)
    assert isinstance(theirs, Raised)
    assert isinstance(theirs.error, (TypeError, KeyError))
    assert ours == expected
