"""copyfile, copytree (and their _from_local / _to_local forms), remove, rmtree and
copy_if_symlink_fails.

treadle.fileio next to mmengine.fileio 0.10 on local files (see tests/support/fileio_parity.py).
Skipped without MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import os
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


def _copy_scenarios():
    def copy(function, src, dst):
        def scenario(f, r):
            return getattr(f, function)(src(r), dst(r)), snapshot(r)

        return scenario

    file_targets = {
        "to_a_file": (lambda r: p(r, "a.txt"), lambda r: p(r, "copy.txt")),
        "into_a_directory": (lambda r: p(r, "a.txt"), lambda r: p(r, "empty")),
        "into_a_directory_slash": (lambda r: p(r, "a.txt"), lambda r: p(r, "empty") + "/"),
        "onto_an_existing_file": (lambda r: p(r, "a.txt"), lambda r: p(r, "b.py")),
        "pathlib_to_a_file": (lambda r: pathlib.Path(r, "a.txt"), lambda r: pathlib.Path(r, "n")),
        "pathlib_into_a_directory": (
            lambda r: pathlib.Path(r, "a.txt"),
            lambda r: pathlib.Path(r, "sub"),
        ),
        "from_a_link": (lambda r: p(r, "alink"), lambda r: p(r, "copy.txt")),
        "same_file": (lambda r: p(r, "a.txt"), lambda r: p(r, "a.txt")),
        "same_file_through_a_link": (lambda r: p(r, "a.txt"), lambda r: p(r, "alink")),
        "missing_source": (lambda r: p(r, "missing"), lambda r: p(r, "copy.txt")),
        "directory_source": (lambda r: p(r, "sub"), lambda r: p(r, "copy")),
    }
    tree_targets = {
        "new_directory": (lambda r: p(r, "sub"), lambda r: p(r, "copy")),
        "pathlib": (lambda r: pathlib.Path(r, "sub"), lambda r: pathlib.Path(r, "copy")),
        "with_links_and_hidden_files": (lambda r: r, lambda r: p(r, "empty", "all")),
        "existing_destination": (lambda r: p(r, "sub"), lambda r: p(r, "empty")),
        "missing_source": (lambda r: p(r, "missing"), lambda r: p(r, "copy")),
        "file_source": (lambda r: p(r, "a.txt"), lambda r: p(r, "copy")),
    }
    for function in ("copyfile", "copyfile_from_local", "copyfile_to_local"):
        for name, (src, dst) in file_targets.items():
            SAME[f"{function}_{name}"] = copy(function, src, dst)
    for function in ("copytree", "copytree_from_local", "copytree_to_local"):
        for name, (src, dst) in tree_targets.items():
            SAME[f"{function}_{name}"] = copy(function, src, dst)

    def copyfile_keeps_the_mode(f, r):
        os.chmod(p(r, "b.py"), 0o750)
        f.copyfile(p(r, "b.py"), p(r, "run.py"))
        return oct(os.stat(p(r, "run.py")).st_mode & 0o777)

    SAME["copyfile_keeps_the_mode"] = copyfile_keeps_the_mode


def _remove_scenarios():
    def remove(function, path):
        return lambda f, r: (getattr(f, function)(path(r)), snapshot(r))

    SAME.update(
        {
            "remove_file": remove("remove", lambda r: p(r, "a.txt")),
            "remove_pathlib": remove("remove", lambda r: pathlib.Path(r, "sub", "d.py")),
            "remove_hidden_file": remove("remove", lambda r: p(r, ".hidden")),
            "remove_file_link": remove("remove", lambda r: p(r, "alink")),
            "remove_missing": remove("remove", lambda r: p(r, "missing")),
            "remove_directory": remove("remove", lambda r: p(r, "sub")),
            "rmtree_directory": remove("rmtree", lambda r: p(r, "sub")),
            "rmtree_pathlib": remove("rmtree", lambda r: pathlib.Path(r, "sub", "deep")),
            "rmtree_empty_directory": remove("rmtree", lambda r: p(r, "empty")),
            "rmtree_missing": remove("rmtree", lambda r: p(r, "missing")),
            "rmtree_file": remove("rmtree", lambda r: p(r, "a.txt")),
            "rmtree_directory_link": remove("rmtree", lambda r: p(r, "sublink")),
        }
    )


def _symlink_scenarios():
    def link(src, dst):
        return lambda f, r: (f.copy_if_symlink_fails(src(r), dst(r)), snapshot(r))

    SAME.update(
        {
            "copy_if_symlink_fails_file": link(lambda r: p(r, "a.txt"), lambda r: p(r, "ln")),
            "copy_if_symlink_fails_directory": link(lambda r: p(r, "sub"), lambda r: p(r, "ln")),
            "copy_if_symlink_fails_pathlib": link(
                lambda r: pathlib.Path(r, "a.txt"), lambda r: pathlib.Path(r, "ln")
            ),
            # The link cannot be made: the file is copied over the existing destination.
            "copy_if_symlink_fails_onto_a_file": link(
                lambda r: p(r, "a.txt"), lambda r: p(r, "b.py")
            ),
            "copy_if_symlink_fails_directory_onto_a_directory": link(
                lambda r: p(r, "sub"), lambda r: p(r, "empty")
            ),
            "copy_if_symlink_fails_missing_source": link(
                lambda r: p(r, "missing"), lambda r: p(r, "ln")
            ),
        }
    )


for _collect in (
    _copy_scenarios,
    _remove_scenarios,
    _symlink_scenarios,
):
    _collect()


@pytest.mark.parametrize("name", sorted(SAME))
def test_same_as_mmengine(name, tmp_path):
    outcomes = run_on_copies(SAME[name], tmp_path)
    assert_same(outcomes["treadle"], outcomes["mmengine"])
