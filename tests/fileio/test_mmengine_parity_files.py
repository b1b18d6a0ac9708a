"""get, put, get_text, put_text, exists / isdir / isfile, join_path and get_local_path.

treadle.fileio next to mmengine.fileio 0.10 on local files (see tests/support/fileio_parity.py).
Skipped without MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import pathlib

import pytest

pytest.importorskip("mmengine")


from fileio_parity import (  # in tests/support, on pytest's sys.path
    assert_same,
    p,
    restore_mmengine_registries,  # noqa: F401 (autouse fixture)
    run_on_copies,
    snapshot,
)

SAME = {}


def _readwrite_scenarios():
    def put_then_get(f, r):
        result = f.put(b"\x00bytes\xff", p(r, "new", "nested", "x.bin"))
        return result, f.get(p(r, "new", "nested", "x.bin")), snapshot(r)

    def put_replaces(f, r):
        f.put(b"replaced", p(r, "a.txt"))
        return snapshot(r)

    def put_text_then_get(f, r):
        f.put_text("héllo\r\nwörld", p(r, "t", "x.txt"))
        return f.get(p(r, "t", "x.txt")), f.get_text(p(r, "t", "x.txt")), snapshot(r)

    def put_through_link(f, r):
        f.put(b"via link", p(r, "alink"))
        return snapshot(r)

    scenarios = {
        "get_bytes": lambda f, r: f.get(p(r, "a.txt")),
        "get_pathlib": lambda f, r: f.get(pathlib.Path(r, "sub", "c.txt")),
        "get_through_link": lambda f, r: f.get(p(r, "alink")),
        "get_missing": lambda f, r: f.get(p(r, "missing.txt")),
        "get_directory": lambda f, r: f.get(p(r, "sub")),
        "get_text": lambda f, r: f.get_text(p(r, "classes.txt")),
        "get_text_pathlib": lambda f, r: f.get_text(pathlib.Path(r, "a.txt")),
        "get_text_missing": lambda f, r: f.get_text(p(r, "missing.txt")),
        "get_text_latin1": lambda f, r: (
            pathlib.Path(r, "l.txt").write_bytes("é".encode("latin-1")),
            f.get_text(p(r, "l.txt"), encoding="latin-1"),
        ),
        "get_text_bad_utf8": lambda f, r: (
            pathlib.Path(r, "l.txt").write_bytes(b"\xff\xfe"),
            f.get_text(p(r, "l.txt")),
        ),
        "put_then_get": put_then_get,
        "put_replaces": put_replaces,
        "put_pathlib": lambda f, r: (f.put(b"x", pathlib.Path(r, "q.bin")), snapshot(r)),
        "put_through_link": put_through_link,
        "put_str": lambda f, r: f.put("not bytes", p(r, "x.bin")),
        "put_onto_directory": lambda f, r: f.put(b"x", p(r, "sub")),
        "put_under_a_file": lambda f, r: f.put(b"x", p(r, "a.txt", "x.bin")),
        "put_text_then_get": put_text_then_get,
        "put_text_bytes": lambda f, r: f.put_text(b"bytes", p(r, "x.txt")),
        "put_text_onto_directory": lambda f, r: f.put_text("x", p(r, "empty")),
    }
    SAME.update(scenarios)


def _predicate_scenarios():
    def predicates(path):
        return lambda f, r: (f.exists(path(r)), f.isdir(path(r)), f.isfile(path(r)))

    for name, path in {
        "file": lambda r: p(r, "a.txt"),
        "directory": lambda r: p(r, "sub"),
        "hidden_file": lambda r: p(r, ".hidden"),
        "missing": lambda r: p(r, "missing"),
        "file_link": lambda r: p(r, "alink"),
        "directory_link": lambda r: p(r, "sublink"),
        "pathlib_file": lambda r: pathlib.Path(r, "a.txt"),
        "pathlib_directory": lambda r: pathlib.Path(r, "sub"),
        "trailing_slash": lambda r: p(r, "sub") + "/",
        "file_with_trailing_slash": lambda r: p(r, "a.txt") + "/",
    }.items():
        SAME[f"exists_isdir_isfile_{name}"] = predicates(path)


def _join_path_scenarios():
    SAME.update(
        {
            "join_path_one_part": lambda f, r: f.join_path(r),
            "join_path_two_parts": lambda f, r: f.join_path(r, "a.txt"),
            "join_path_several_parts": lambda f, r: f.join_path(r, "x", "y", "z.txt"),
            "join_path_absolute_part": lambda f, r: f.join_path(r, "x", "/abs", "z.txt"),
            "join_path_trailing_slash": lambda f, r: f.join_path(r + "/", "x/", "y"),
            "join_path_empty_part": lambda f, r: f.join_path(r, "", "x", ""),
            "join_path_pathlib": lambda f, r: f.join_path(pathlib.Path(r), "x", pathlib.Path("y")),
            "join_path_relative": lambda f, r: f.join_path("rel", "x"),
        }
    )


def _local_path_scenarios():
    def local_path(path):
        def scenario(f, r):
            with f.get_local_path(path(r)) as local:
                return local, pathlib.Path(local).exists()

        return scenario

    SAME["get_local_path_file"] = local_path(lambda r: p(r, "a.txt"))
    SAME["get_local_path_pathlib"] = local_path(lambda r: pathlib.Path(r, "a.txt"))
    SAME["get_local_path_directory"] = local_path(lambda r: p(r, "sub"))
    SAME["get_local_path_link"] = local_path(lambda r: p(r, "alink"))


for _collect in (
    _readwrite_scenarios,
    _predicate_scenarios,
    _join_path_scenarios,
    _local_path_scenarios,
):
    _collect()


@pytest.mark.parametrize("name", sorted(SAME))
def test_same_as_mmengine(name, tmp_path):
    outcomes = run_on_copies(SAME[name], tmp_path)
    assert_same(outcomes["treadle"], outcomes["mmengine"])
