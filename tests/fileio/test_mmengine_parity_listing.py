"""list_dir_or_file: special cases, then every combination of its arguments on one tree,
in the same order.

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
    make_tree,
    mm_fileio,
    outcome,
    p,
    restore_mmengine_registries,  # noqa: F401 (autouse fixture)
    run_on_copies,
    tr_fileio,
)

SAME = {}


def _listing_scenarios():
    def listing(path, **kwargs):
        return lambda f, r: sorted(f.list_dir_or_file(path(r), **kwargs))

    def special_entries(f, r):
        os.symlink(p(r, "nowhere"), p(r, "empty", "broken"))
        os.mkfifo(p(r, "empty", "fifo"))
        pathlib.Path(r, "empty", "real.txt").write_text("x")
        return sorted(f.list_dir_or_file(p(r, "empty"), recursive=True))

    SAME.update(
        {
            "list_dir_or_file_pathlib": listing(lambda r: pathlib.Path(r), recursive=True),
            "list_dir_or_file_trailing_slash": listing(lambda r: r + "/", recursive=True),
            "list_dir_or_file_of_a_link": listing(lambda r: p(r, "sublink"), recursive=True),
            "list_dir_or_file_empty": listing(lambda r: p(r, "empty"), recursive=True),
            "list_dir_or_file_missing": listing(lambda r: p(r, "missing")),
            "list_dir_or_file_of_a_file": listing(lambda r: p(r, "a.txt")),
            "list_dir_or_file_suffix_list": listing(lambda r: r, list_dir=False, suffix=[".py"]),
            "list_dir_or_file_suffix_int": listing(lambda r: r, list_dir=False, suffix=1),
            "list_dir_or_file_special_entries": special_entries,
            # Generators both: nothing is checked before the first item is asked for.
            "list_dir_or_file_is_lazy": lambda f, r: (
                type(f.list_dir_or_file(p(r, "missing"), suffix=1)).__name__
            ),
        }
    )


for _collect in (_listing_scenarios,):
    _collect()


@pytest.mark.parametrize("name", sorted(SAME))
def test_same_as_mmengine(name, tmp_path):
    outcomes = run_on_copies(SAME[name], tmp_path)
    assert_same(outcomes["treadle"], outcomes["mmengine"])


# Listings: every combination, on one tree, in the same order --------------------------------

SUFFIXES = {"none": None, "txt": ".txt", "tuple": (".txt", ".py"), "name": "c.txt", "case": ".TXT"}
LISTINGS = [
    (list_dir, list_file, suffix, recursive)
    for list_dir in (True, False)
    for list_file in (True, False)
    for suffix in SUFFIXES
    for recursive in (False, True)
]


@pytest.fixture(scope="module")
def shared_tree(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("shared")
    make_tree(root)
    return str(root)


@pytest.mark.parametrize(
    ("list_dir", "list_file", "suffix", "recursive"),
    LISTINGS,
    ids=[
        f"dir={d}-file={f}-suffix={s}-recursive={r}".replace("True", "1").replace("False", "0")
        for d, f, s, r in LISTINGS
    ],
)
def test_list_dir_or_file_same_as_mmengine(shared_tree, list_dir, list_file, suffix, recursive):
    def listing(fileio):
        return lambda: list(
            fileio.list_dir_or_file(
                shared_tree,
                list_dir=list_dir,
                list_file=list_file,
                suffix=SUFFIXES[suffix],
                recursive=recursive,
            )
        )

    theirs = outcome(listing(mm_fileio), shared_tree)
    ours = outcome(listing(tr_fileio), shared_tree)
    assert_same(ours, theirs)
    if list_dir and SUFFIXES[suffix] is not None:
        assert isinstance(ours.error, TypeError)
    else:
        assert ours == theirs  # the same items in the same order (both follow os.scandir)
