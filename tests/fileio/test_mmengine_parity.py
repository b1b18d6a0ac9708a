"""treadle.fileio next to mmengine.fileio 0.10 on local files: every scenario makes the same
calls on both and compares what a user sees (return values and their types, the files left on
disk, exception types). Skipped without MMEngine:
``hatch run mmengine:pytest tests/fileio/test_mmengine_parity.py``.

Each library gets its own copy of the same directory tree; results are compared with the root
of the tree replaced by ``<root>``. Listings run both libraries on one tree, so that their
orders can be compared too. The deliberate differences are the ``test_deliberate_*`` tests at
the end, each asserting both behaviours; README.md lists them.
"""

from __future__ import annotations

import io
import os
import pathlib
import pickle
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
    """Equal results, or treadle raising an instance of the type MMEngine raises."""
    if isinstance(theirs, Raised):
        assert isinstance(ours, Raised), f"MMEngine raised {theirs}, treadle returned {ours!r}"
        assert isinstance(ours.error, type(theirs.error)), (ours, theirs)
    else:
        assert ours == theirs


def run_on_copies(scenario, tmp_path: pathlib.Path) -> dict[str, object]:
    """The outcome of ``scenario(fileio, root)`` for each library, on its own tree."""
    outcomes = {}
    for label, fileio in LIBRARIES.items():
        root = tmp_path / label
        root.mkdir(parents=True)
        make_tree(root)
        outcomes[label] = outcome(lambda: scenario(fileio, str(root)), str(root))  # noqa: B023
    return outcomes


# Scenarios with the same outcome ---------------------------------------------------------
# Each takes the fileio module and the root of its tree, and returns what a user observes;
# scenarios that change files return the snapshot of the tree too.

SAME = {}


def same(function):
    SAME[function.__name__] = function
    return function


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


def _serialization_scenarios():
    obj = {"name": "treadle", "lr": 0.1, "steps": [1, 2, 3], "nested": {"a": None, "b": True}}

    def dump_and_load(extension, **kwargs):
        def scenario(f, r):
            path = p(r, "out", f"obj.{extension}")
            result = f.dump(obj, path, **kwargs)
            loaded = f.load(path, file_format=kwargs.get("file_format"))
            return result, loaded, pathlib.Path(path).read_bytes() if "p" not in extension else ""

        return scenario

    for extension in ("json", "yaml", "yml", "pkl", "pickle"):
        SAME[f"dump_load_{extension}_by_extension"] = dump_and_load(extension)
    SAME["dump_load_json_file_format_over_extension"] = dump_and_load("txt", file_format="json")
    SAME["dump_load_yaml_file_format_over_extension"] = dump_and_load("json", file_format="yaml")

    def dump_to_string(file_format, **kwargs):
        return lambda f, r: f.dump(obj, file_format=file_format, **kwargs)

    for file_format in ("json", "yaml", "yml"):
        SAME[f"dump_{file_format}_to_a_string"] = dump_to_string(file_format)
    SAME["dump_json_to_a_string_indent"] = dump_to_string("json", indent=2, sort_keys=True)
    SAME["dump_yaml_to_a_string_flow_style"] = dump_to_string("yaml", default_flow_style=True)
    SAME["dump_pickle_protocol_2_to_bytes"] = dump_to_string("pkl", protocol=2)
    SAME["dump_pickle_to_bytes_loads_back"] = lambda f, r: pickle.loads(
        f.dump(obj, file_format="pickle")
    )

    def dump_to_file_object(file_format, buffer_type, **kwargs):
        def scenario(f, r):
            buffer = buffer_type()
            result = f.dump(obj, buffer, file_format=file_format, **kwargs)
            buffer.seek(0)
            return result, buffer.getvalue(), f.load(buffer, file_format=file_format)

        return scenario

    SAME["dump_load_json_file_object"] = dump_to_file_object("json", io.StringIO)
    SAME["dump_load_yaml_file_object"] = dump_to_file_object("yaml", io.StringIO)
    SAME["dump_load_pickle_file_object"] = dump_to_file_object("pkl", io.BytesIO, protocol=2)

    def dump_to_open_file(f, r):
        with open(p(r, "o.json"), "w") as file:
            f.dump(obj, file, file_format="json")
        with open(p(r, "o.json")) as file:
            return f.load(file, file_format="json"), snapshot(r)

    def load_yaml_python_tags(f, r):
        pathlib.Path(r, "t.yaml").write_text("a: !!python/tuple [1, 2]\nb: !!set {x: null}\n")
        return f.load(p(r, "t.yaml"))

    def dump_json_sets_and_ranges(f, r):
        return f.dump({"s": {3}, "r": range(3), "t": (1, 2)}, file_format="json")

    def load_file_client_args(f, r):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = f.load(p(r, "c.json"), file_client_args={"backend": "disk"})
        return loaded, sorted({w.category.__name__ for w in caught})

    def dump_file_client_args(f, r):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f.dump([1], p(r, "fca.json"), file_client_args={"backend": "disk"})
        return snapshot(r), sorted({w.category.__name__ for w in caught})

    SAME.update(
        {
            "dump_to_an_open_file": dump_to_open_file,
            "dump_pathlib": lambda f, r: (f.dump([1, 2], pathlib.Path(r, "l.json")), snapshot(r)),
            "dump_json_sets_ranges_tuples": dump_json_sets_and_ranges,
            "dump_json_unserializable": lambda f, r: f.dump({"o": object()}, file_format="json"),
            "dump_without_file_or_format": lambda f, r: f.dump([1]),
            "dump_unknown_extension": lambda f, r: f.dump([1], p(r, "x.unknown")),
            "dump_no_extension": lambda f, r: f.dump([1], p(r, "noext")),
            "dump_file_object_without_format": lambda f, r: f.dump([1], io.StringIO()),
            "dump_unknown_format": lambda f, r: f.dump([1], file_format="toml"),
            "dump_to_an_int": lambda f, r: f.dump([1], 3, file_format="json"),
            "dump_file_client_args": dump_file_client_args,
            "dump_file_client_args_and_backend_args": lambda f, r: f.dump(
                [1], p(r, "x.json"), file_client_args={}, backend_args={}
            ),
            "load_json": lambda f, r: f.load(p(r, "c.json")),
            "load_yaml": lambda f, r: f.load(p(r, "d.yaml")),
            "load_pathlib": lambda f, r: f.load(pathlib.Path(r, "d.yaml")),
            "load_file_format_over_extension": lambda f, r: f.load(
                p(r, "c.json"), file_format="yaml"
            ),
            "load_yaml_python_tags": load_yaml_python_tags,
            "load_missing": lambda f, r: f.load(p(r, "missing.json")),
            "load_unknown_extension": lambda f, r: f.load(p(r, "a.txt")),
            "load_file_object_without_format": lambda f, r: f.load(io.StringIO("[1]")),
            "load_an_int": lambda f, r: f.load(3, file_format="json"),
            "load_bad_json": lambda f, r: f.load(p(r, "d.yaml"), file_format="json"),
            "load_file_client_args": load_file_client_args,
            "load_file_client_args_and_backend_args": lambda f, r: f.load(
                p(r, "c.json"), file_client_args={}, backend_args={}
            ),
        }
    )


def _parse_scenarios():
    def lines(name="classes.txt", content=None, **kwargs):
        def scenario(f, r):
            if content is not None:
                pathlib.Path(r, name).write_bytes(content)
            return f.list_from_file(p(r, name), **kwargs)

        return scenario

    SAME.update(
        {
            "list_from_file": lines(),
            "list_from_file_pathlib": lambda f, r: f.list_from_file(pathlib.Path(r, "a.txt")),
            "list_from_file_prefix": lines(prefix="cls_"),
            "list_from_file_offset": lines(offset=2),
            "list_from_file_offset_past_the_end": lines(offset=10),
            "list_from_file_negative_offset": lines(offset=-2),
            "list_from_file_max_num": lines(max_num=2),
            "list_from_file_max_num_negative": lines(max_num=-1),
            "list_from_file_max_num_past_the_end": lines(max_num=50),
            "list_from_file_all_options": lines(prefix="p/", offset=1, max_num=3),
            "list_from_file_latin1": lines("l.txt", "é\nà\n".encode("latin-1"), encoding="latin-1"),
            "list_from_file_empty": lines("e.txt", b""),
            "list_from_file_blank_lines": lines("e.txt", b"\n\na\n\n"),
            "list_from_file_crlf_and_cr": lines("e.txt", b"a\r\nb\rc\r\n"),
            "list_from_file_form_feed_and_separators": lines(
                "e.txt", "a\x0cb\nc\u2028d\x1ce\x85f\n".encode()
            ),
            "list_from_file_missing": lines("missing.txt"),
            "list_from_file_bad_encoding": lines("e.txt", b"\xff", encoding="utf-8"),
            "dict_from_file": lambda f, r: f.dict_from_file(p(r, "labels.txt")),
            "dict_from_file_key_type": lambda f, r: f.dict_from_file(
                p(r, "labels.txt"), key_type=int
            ),
            "dict_from_file_bad_key": lambda f, r: f.dict_from_file(
                p(r, "labels.txt"), key_type=lambda key: {"1": 1}[key]
            ),
            "dict_from_file_pathlib": lambda f, r: f.dict_from_file(pathlib.Path(r, "labels.txt")),
            "dict_from_file_crlf_and_form_feed": lambda f, r: (
                pathlib.Path(r, "x.txt").write_bytes(b"a 1\r\nb 2\x0cc 3\n"),
                f.dict_from_file(p(r, "x.txt")),
            ),
            "dict_from_file_missing": lambda f, r: f.dict_from_file(p(r, "missing.txt")),
            "dict_from_file_latin1": lambda f, r: (
                pathlib.Path(r, "x.txt").write_bytes("é 1\n".encode("latin-1")),
                f.dict_from_file(p(r, "x.txt"), encoding="latin-1"),
            ),
        }
    )


def _handler_scenarios():
    def upper_handler(f, **init):
        class UpperHandler(f.BaseFileHandler):
            def __init__(self, mark=""):
                self.mark = mark

            def load_from_fileobj(self, file, **kwargs):
                return self.mark + file.read().upper()

            def dump_to_fileobj(self, obj, file, **kwargs):
                file.write(str(obj))

            def dump_to_str(self, obj, **kwargs):
                return self.mark + str(obj)

        return UpperHandler

    def decorator(f, r):
        handler = f.register_handler(["upx", "upy"])(upper_handler(f))
        f.dump("hello", p(r, "h.upx"))
        return (
            handler.__name__,
            f.load(p(r, "h.upx")),
            f.load(p(r, "h.upx"), file_format="upy"),
            f.dump(3, file_format="upy"),
            snapshot(r),
        )

    def one_format_and_kwargs(f, r):
        f.register_handler("upx", mark=">")(upper_handler(f))
        return f.dump(1, file_format="upx"), f.load(p(r, "a.txt"), file_format="upx")

    def replaces_json(f, r):
        f.register_handler("json")(upper_handler(f))
        return f.load(p(r, "c.json")), f.dump([1], file_format="json")

    def builtin_handlers(f, r):
        # file_handlers is not exported by mmengine.fileio: read both registries directly.
        handlers = mm_handler_registry.file_handlers if f is mm_fileio else f.file_handlers
        return sorted(
            (file_format, type(handler).__name__, handler.str_like)
            for file_format, handler in handlers.items()
        ) + [isinstance(h, f.BaseFileHandler) for h in handlers.values()]

    def not_a_handler(f, r):
        class NotAHandler:
            pass

        return f.register_handler("x")(NotAHandler)

    SAME.update(
        {
            "register_handler_decorator": decorator,
            "register_handler_one_format_and_kwargs": one_format_and_kwargs,
            "register_handler_replaces_json": replaces_json,
            "register_handler_not_a_handler": not_a_handler,
            "register_handler_bad_formats": lambda f, r: f.register_handler(3)(upper_handler(f)),
            "register_handler_list_of_non_str": lambda f, r: f.register_handler(["a", 1])(
                upper_handler(f)
            ),
            "builtin_handler_classes": builtin_handlers,
        }
    )


def _backend_scenarios():
    def key_value_backend(f):
        class KeyValueBackend(f.BaseStorageBackend):
            def get(self, filepath):
                return b"kv:" + str(filepath).encode()

            def get_text(self, filepath, encoding="utf-8"):
                return "kv:" + str(filepath)

        return KeyValueBackend

    def decorator(f, r):
        cls = f.register_backend("kvtest", prefixes="kvtest")(key_value_backend(f))
        backend = f.get_file_backend("kvtest://a")
        return (
            cls.__name__,
            type(backend).__name__,
            f.get("kvtest://x/y"),
            f.get_text("kvtest://z"),
            type(f.get_file_backend(backend_args={"backend": "kvtest"})).__name__,
        )

    def function(f, r):
        result = f.register_backend("kvtest", key_value_backend(f), prefixes=["kva", "kvb"])
        return result, f.get("kva://1"), f.get("kvb://2")

    def duplicate_name(f, r):
        f.register_backend("kvtest", key_value_backend(f))
        return f.register_backend("kvtest", key_value_backend(f))

    def force_replaces(f, r):
        f.register_backend("kvtest", key_value_backend(f), prefixes="kvtest")

        class Other(key_value_backend(f)):
            def get(self, filepath):
                return b"other"

        f.register_backend("kvtest", Other, force=True, prefixes="kvtest")
        return type(f.get_file_backend("kvtest://a")).__name__, f.get("kvtest://a")

    def duplicate_prefix(f, r):
        f.register_backend("kv1", key_value_backend(f), prefixes="kvtest")
        return f.register_backend("kv2", key_value_backend(f), prefixes="kvtest")

    def replace_local_prefix(f, r):
        f.register_backend("kvtest", key_value_backend(f), prefixes="", force=True)
        return type(f.get_file_backend(p(r, "a.txt"), enable_singleton=False)).__name__

    def not_a_subclass(f, r):
        class Plain:
            pass

        return f.register_backend("kvtest", Plain)

    SAME.update(
        {
            "register_backend_decorator": decorator,
            "register_backend_function": function,
            "register_backend_duplicate_name": duplicate_name,
            "register_backend_force_replaces": force_replaces,
            "register_backend_duplicate_prefix": duplicate_prefix,
            "register_backend_replace_local_prefix": replace_local_prefix,
            "register_backend_not_a_subclass": not_a_subclass,
            "register_backend_not_a_class": lambda f, r: f.register_backend("kvtest", object()),
            "register_backend_name_not_str": lambda f, r: f.register_backend(
                1, key_value_backend(f)
            ),
            "register_backend_abstract_methods": lambda f, r: (
                f.register_backend("kvtest", f.BaseStorageBackend)
                or f.get_file_backend(backend_args={"backend": "kvtest"})
            ),
        }
    )


def _get_file_backend_scenarios():
    def singleton(f, r):
        first = f.get_file_backend(r, enable_singleton=True)
        return (
            first is f.get_file_backend(p(r, "other"), enable_singleton=True),
            first is f.get_file_backend(r),
            f.get_file_backend(r) is f.get_file_backend(r),
            f.get_file_backend(r, enable_singleton=False) is first,
        )

    def singleton_by_name(f, r):
        first = f.get_file_backend(backend_args={"backend": "local"}, enable_singleton=True)
        second = f.get_file_backend(
            p(r, "x"), backend_args={"backend": "local"}, enable_singleton=True
        )
        return type(first).__name__, first is second

    def backend_properties(f, r):
        backend = f.get_file_backend(r)
        return (
            backend.name,
            backend.allow_symlink,
            isinstance(backend, f.LocalBackend),
            isinstance(backend, f.BaseStorageBackend),
            isinstance(f.HardDiskBackend(), f.LocalBackend),
        )

    SAME.update(
        {
            "get_file_backend_local": lambda f, r: type(f.get_file_backend(r)).__name__,
            "get_file_backend_pathlib": lambda f, r: (
                type(f.get_file_backend(pathlib.Path(r))).__name__
            ),
            "get_file_backend_by_name": lambda f, r: (
                type(f.get_file_backend(backend_args={"backend": "local"})).__name__
            ),
            "get_file_backend_name_over_prefix": lambda f, r: (
                type(f.get_file_backend("unknown://x", backend_args={"backend": "local"})).__name__
            ),
            "get_file_backend_without_uri": lambda f, r: f.get_file_backend(),
            "get_file_backend_without_uri_empty_args": lambda f, r: f.get_file_backend(
                backend_args={}
            ),
            "get_file_backend_unknown_prefix": lambda f, r: f.get_file_backend("unknown://x"),
            "get_file_backend_unknown_name": lambda f, r: f.get_file_backend(
                backend_args={"backend": "unknown"}
            ),
            "get_file_backend_bad_arguments": lambda f, r: f.get_file_backend(
                r, backend_args={"no_such_argument": 1}
            ),
            "get_file_backend_singletons": singleton,
            "get_file_backend_singletons_by_name": singleton_by_name,
            "backend_properties": backend_properties,
            "backend_methods_direct": lambda f, r: (
                f.LocalBackend().get_text(p(r, "a.txt")),
                sorted(f.LocalBackend().list_dir_or_file(r, list_dir=False, suffix=".py")),
                f.LocalBackend().join_path(r, "x"),
            ),
        }
    )


for _collect in (
    _readwrite_scenarios,
    _predicate_scenarios,
    _join_path_scenarios,
    _local_path_scenarios,
    _copy_scenarios,
    _remove_scenarios,
    _symlink_scenarios,
    _listing_scenarios,
    _serialization_scenarios,
    _parse_scenarios,
    _handler_scenarios,
    _backend_scenarios,
    _get_file_backend_scenarios,
):
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


# Deliberate differences (README.md, "Differences from MMEngine 0.10") ----------------------


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
