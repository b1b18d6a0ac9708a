"""register_handler, register_backend and get_file_backend.

treadle.fileio next to mmengine.fileio 0.10 on local files (see tests/support/fileio_parity.py).
Skipped without MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import pathlib

import pytest

pytest.importorskip("mmengine")


from fileio_parity import (  # in tests/support, on pytest's sys.path
    assert_same,
    mm_fileio,
    mm_handler_registry,
    p,
    restore_mmengine_registries,  # noqa: F401 (autouse fixture)
    run_on_copies,
    snapshot,
)

SAME = {}


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
    _handler_scenarios,
    _backend_scenarios,
    _get_file_backend_scenarios,
):
    _collect()


@pytest.mark.parametrize("name", sorted(SAME))
def test_same_as_mmengine(name, tmp_path):
    outcomes = run_on_copies(SAME[name], tmp_path)
    assert_same(outcomes["treadle"], outcomes["mmengine"])
