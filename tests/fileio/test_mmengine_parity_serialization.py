"""dump and load in every format, list_from_file and dict_from_file.

treadle.fileio next to mmengine.fileio 0.10 on local files (see tests/support/fileio_parity.py).
Skipped without MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import io
import pathlib
import pickle
import warnings

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


for _collect in (
    _serialization_scenarios,
    _parse_scenarios,
):
    _collect()


@pytest.mark.parametrize("name", sorted(SAME))
def test_same_as_mmengine(name, tmp_path):
    outcomes = run_on_copies(SAME[name], tmp_path)
    assert_same(outcomes["treadle"], outcomes["mmengine"])
