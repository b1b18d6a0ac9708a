"""What the test_mmengine_parity_*.py files of treadle-fileio share: each imports this module
(pytest puts tests/support on sys.path) after skipping where mmengine is missing.

treadle.fileio next to mmengine.fileio 0.10 on local files: every scenario makes the same
calls on both and compares what a user sees (return values and their types, the files left on
disk, exception types). Run them all with
``hatch run mmengine:parity``.

Each library gets its own copy of the same directory tree; results are compared with the root
of the tree replaced by ``<root>``. Listings run both libraries on one tree, so that their
orders can be compared too. The deliberate differences are the ``test_deliberate_*`` tests of
test_mmengine_parity_differences.py, each asserting both behaviours; README.md lists them.
"""

from __future__ import annotations

import os
import pathlib
import warnings

import pytest

pytest.importorskip("mmengine")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import mmengine.fileio as mm_fileio
    from mmengine.fileio import io as mm_io
    from mmengine.fileio.backends import registry_utils as mm_backend_registry
    from mmengine.fileio.handlers import registry_utils as mm_handler_registry

from treadle import fileio as tr_fileio

LIBRARIES = {"mmengine": mm_fileio, "treadle": tr_fileio}


@pytest.fixture(autouse=True)
def restore_mmengine_registries():
    """What a scenario registers in MMEngine does not outlive it (conftest does treadle's)."""
    registries = (
        mm_backend_registry.backends,
        mm_backend_registry.prefix_to_backends,
        mm_handler_registry.file_handlers,
        mm_io.backend_instances,
    )
    saved = [dict(registry) for registry in registries]
    yield
    for registry, snapshot in zip(registries, saved, strict=True):
        registry.clear()
        registry.update(snapshot)


# The tree -----------------------------------------------------------------------------------


def make_tree(root: pathlib.Path) -> None:
    """Files, directories, hidden ones, an empty directory and links to a file and a directory."""
    files = {
        "a.txt": "alpha\n",
        "b.py": "print(1)\n",
        "c.json": '{"k": [1, 2], "s": "x"}',
        "d.yaml": "lr: 0.1\nsteps: [1, 2]\n",
        ".hidden": "h",
        "sub/c.txt": "charlie",
        "sub/d.py": "pass",
        "sub/deep/e.txt": "echo",
        "sub/deep/f.TXT": "foxtrot",
        ".hdir/g.txt": "golf",
        "classes.txt": "cat\ndog\r\nbird\n\nfish  \nlast",
        "labels.txt": "1 cat\n2 dog puppy\n3  bird\tyoung \n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    (root / "empty").mkdir()
    (root / "alink").symlink_to(root / "a.txt")
    (root / "sublink").symlink_to(root / "sub", target_is_directory=True)


def p(root: str, *parts: str) -> str:
    return os.path.join(root, *parts)


def snapshot(root: str) -> list[tuple]:
    """Everything under ``root``: (relative path, kind, content or link target)."""
    entries = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            if os.path.islink(path):
                entries.append((relative, "link", os.readlink(path)))
            elif os.path.isdir(path):
                entries.append((relative, "dir", None))
            else:
                entries.append((relative, "file", pathlib.Path(path).read_bytes()))
    return entries


# Outcomes -----------------------------------------------------------------------------------


class Raised:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __repr__(self) -> str:
        return f"Raised({type(self.error).__name__}: {self.error})"


def normalize(value: object, root: str) -> object:
    """``value`` with ``root`` replaced in strings, and the type of each leaf kept, so that a
    str and a Path, or True and 1, compare different."""
    if isinstance(value, os.PathLike):
        return ("Path", normalize(os.fspath(value), root))
    if isinstance(value, str):
        return value.replace(root, "<root>")
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [normalize(item, root) for item in value])
    if isinstance(value, dict):
        return {normalize(k, root): normalize(v, root) for k, v in value.items()}
    if isinstance(value, type):
        return ("class", value.__name__)
    return (type(value).__name__, value)


def outcome(call, root: str) -> object:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = call()
    except Exception as error:
        return Raised(error)
    return normalize(value, root)


def assert_same(ours: object, theirs: object) -> None:
    """Equal results, or treadle raising an instance of the type MMEngine raises. (pytest
    rewrites the asserts of test files only: the messages here say what differs.)"""
    if isinstance(theirs, Raised):
        assert isinstance(ours, Raised), f"MMEngine raised {theirs}, treadle returned {ours!r}"
        assert isinstance(ours.error, type(theirs.error)), (ours, theirs)
    else:
        assert ours == theirs, f"treadle gave {ours!r}, MMEngine {theirs!r}"


def run_on_copies(scenario, tmp_path: pathlib.Path) -> dict[str, object]:
    """The outcome of ``scenario(fileio, root)`` for each library, on its own tree."""
    outcomes = {}
    for label, fileio in LIBRARIES.items():
        root = tmp_path / label
        root.mkdir(parents=True)
        make_tree(root)
        outcomes[label] = outcome(lambda: scenario(fileio, str(root)), str(root))  # noqa: B023
    return outcomes
