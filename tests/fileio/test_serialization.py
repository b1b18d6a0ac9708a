"""load, dump and their handlers, on file objects and strings (paths: see
test_functions_on_every_backend.py)."""

from __future__ import annotations

import io

import pytest

from treadle import fileio
from treadle.fileio import (
    BaseFileHandler,
    JsonHandler,
    PickleHandler,
    YamlHandler,
    register_handler,
)


class ArrayLike:
    """Stands in for a numpy array: json writes it through ``tolist``."""

    def tolist(self):
        return [1, 2, 3]


def test_dump_to_a_string_and_load_from_file_objects():
    data = {"a": [1, 2], "b": "text"}
    assert (
        fileio.load(io.StringIO(fileio.dump(data, file_format="json")), file_format="json") == data
    )
    assert (
        fileio.load(io.StringIO(fileio.dump(data, file_format="yaml")), file_format="yaml") == data
    )
    pickled = fileio.dump(data, file_format="pkl")
    assert isinstance(pickled, bytes)
    assert fileio.load(io.BytesIO(pickled), file_format="pickle") == data


def test_dump_to_file_objects():
    text = io.StringIO()
    fileio.dump([1, 2], text, file_format="json")
    assert text.getvalue() == "[1, 2]"
    data = io.BytesIO()
    fileio.dump([1, 2], data, file_format="pkl")
    assert fileio.load(io.BytesIO(data.getvalue()), file_format="pkl") == [1, 2]


def test_json_writes_sets_ranges_and_array_likes():
    assert fileio.dump({"s": {3}, "r": range(2), "a": ArrayLike()}, file_format="json") == (
        '{"s": [3], "r": [0, 1], "a": [1, 2, 3]}'
    )
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        fileio.dump(object(), file_format="json")


def test_handler_keyword_arguments():
    assert fileio.dump({"b": 1, "a": 2}, file_format="json", sort_keys=True) == '{"a": 2, "b": 1}'
    assert fileio.dump({"a": [1]}, file_format="yaml", default_flow_style=True) == "{a: [1]}\n"
    assert (
        fileio.load(io.BytesIO(fileio.dump(7, file_format="pkl", protocol=2)), file_format="pkl")
        == 7
    )


def test_handlers_read_and_write_local_paths(tmp_path):
    for handler, name in (
        (JsonHandler(), "a.json"),
        (YamlHandler(), "a.yaml"),
        (PickleHandler(), "a.pkl"),
    ):
        handler.dump_to_path({"k": [1]}, str(tmp_path / name))
        assert handler.load_from_path(str(tmp_path / name)) == {"k": [1]}


def test_unsupported_formats():
    with pytest.raises(
        TypeError, match=r"Unsupported format: 'txt' \(of 'a.txt'\).*json, pickle, pkl, yaml, yml"
    ):
        fileio.load("a.txt")
    with pytest.raises(TypeError, match="Unsupported format: 'xml'"):
        fileio.dump({}, file_format="xml")
    with pytest.raises(ValueError, match="dump needs file_format when file is None"):
        fileio.dump({})
    with pytest.raises(TypeError, match='"file" must be a path or a file object, got int'):
        fileio.load(3, file_format="json")
    with pytest.raises(TypeError, match='"file" must be a path or a file object, got int'):
        fileio.dump({}, 3, file_format="json")


def test_register_handler():
    @register_handler(["txt", "text"], upper=True)
    class TxtHandler(BaseFileHandler):
        def __init__(self, upper: bool = False) -> None:
            self.upper = upper

        def load_from_fileobj(self, file, **kwargs):
            return file.read()

        def dump_to_fileobj(self, obj, file, **kwargs):
            file.write(self.dump_to_str(obj))

        def dump_to_str(self, obj, **kwargs):
            return str(obj).upper() if self.upper else str(obj)

    fileio.dump("hello", "memory://handlers/a.txt")
    assert fileio.load("memory://handlers/a.txt") == "HELLO"
    assert fileio.dump("x", file_format="text") == "X"
    with pytest.raises(TypeError, match="handler must be a BaseFileHandler, got int"):
        register_handler("int")(int)
    with pytest.raises(TypeError, match="file_formats must be a str or a list of str"):
        register_handler(3)(TxtHandler)


def test_file_client_args_are_deprecated_but_work(tmp_path):
    with pytest.warns(DeprecationWarning, match='use "backend_args" instead'):
        fileio.dump([1], str(tmp_path / "a.json"), file_client_args={"backend": "disk"})
    with pytest.warns(DeprecationWarning):
        assert fileio.load(str(tmp_path / "a.json"), file_client_args={"backend": "disk"}) == [1]
    with (
        pytest.raises(ValueError, match="cannot be set at the same time"),
        pytest.warns(DeprecationWarning),
    ):
        fileio.load(str(tmp_path / "a.json"), file_client_args={}, backend_args={})


def test_dict_from_file_needs_two_columns(tmp_path):
    (tmp_path / "d.txt").write_text("a 1\nb\n")
    with pytest.raises(ValueError, match=r"line 2 of .*d.txt' has one column, 'b'"):
        fileio.dict_from_file(tmp_path / "d.txt")
