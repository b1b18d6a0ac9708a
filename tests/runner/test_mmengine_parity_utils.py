"""treadle.runner.utils and treadle.runner.device against MMEngine 0.10's mmengine.utils and
mmengine.device: the same calls give the same results and the same error types, except the
deliberate differences asserted as such below.

Runs only where mmengine is installed: ``hatch run mmengine:pytest``.
"""

from __future__ import annotations

import os
from collections import OrderedDict, namedtuple

import pytest

mm = pytest.importorskip("mmengine.utils")
mm_device = pytest.importorskip("mmengine.device")

import treadle.runner.device as tr_device  # noqa: E402
import treadle.runner.utils as tr  # noqa: E402

Pair = namedtuple("Pair", ["left", "right"])
MM_ONLY = {"call_command", "install_package", "ManagerMeta", "ManagerMixin"}


def outcome(function, *args, **kwargs):
    """What a user observes: ('ok', result) or ('error', the exception's type)."""
    try:
        return "ok", function(*args, **kwargs)
    except Exception as error:  # comparing what each library raises
        return "error", type(error)


def both(name, *args, **kwargs):
    return outcome(getattr(mm, name), *args, **kwargs), outcome(getattr(tr, name), *args, **kwargs)


@pytest.mark.parametrize("name", sorted(set(mm.__all__) - MM_ONLY))
def test_every_public_name_exists(name):
    assert hasattr(tr, name)


@pytest.mark.parametrize("name", mm_device.__all__)
def test_every_device_name_exists(name):
    assert hasattr(tr_device, name)


CASES = [
    ("is_str", ("a",)),
    ("is_str", (b"a",)),
    ("is_str", (1,)),
    ("is_seq_of", ([1, 2], int)),
    ("is_seq_of", ((1, "a"), int)),
    ("is_seq_of", ("ab", str)),
    ("is_seq_of", ([1], int, tuple)),
    ("is_seq_of", ({1, 2}, int)),
    ("is_seq_of", (1, int)),
    ("is_seq_of", ([True], int)),
    ("is_seq_of", (range(3), int)),
    ("is_seq_of", ([], int)),
    ("is_list_of", ([1], int)),
    ("is_list_of", ((1,), int)),
    ("is_tuple_of", ((1,), int)),
    ("is_tuple_of", ([1], int)),
    ("list_cast", ("12", int)),
    ("tuple_cast", ([1.5, 2], int)),
    ("iter_cast", (1, int)),
    ("iter_cast", ([1], 3)),
    ("iter_cast", (("1",), float, list)),
    ("slice_list", ([1, 2, 3, 4, 5], [2, 3])),
    ("slice_list", ([1, 2, 3, 4], 2)),
    ("slice_list", ((1, 2, 3), [1, 2])),
    ("slice_list", ([1, 2, 3], [2, 2])),
    ("slice_list", ([1, 2, 3], "a")),
    ("concat_list", ([[1], [2, 3], (4,)],)),
    ("concat_list", (["ab", "c"],)),
    ("to_1tuple", (None,)),
    ("to_2tuple", (3,)),
    ("to_2tuple", ([1, 2],)),
    ("to_3tuple", ("ab",)),
    ("to_4tuple", (0.5,)),
    ("is_filepath", ("a",)),
    ("is_filepath", (1,)),
    ("is_abs", ("/a",)),
    ("is_abs", ("a",)),
    ("is_abs", ("s3://a",)),
    ("is_abs", ("http://x",)),
    ("check_file_exist", ("/no/such/file",)),
    ("check_file_exist", (os.getcwd(),)),
    ("fopen", (3,)),
    ("scandir", (3,)),
    ("scandir", (".", 3)),
    ("has_method", (OrderedDict(), "keys")),
    ("has_method", (OrderedDict(), "nope")),
    ("get_object_from_string", ("os.path.join",)),
    ("get_object_from_string", ("os.path",)),
    ("get_object_from_string", ("no_such_module_xyz.x",)),
    ("get_object_from_string", ("os.no_such_attribute",)),
    ("get_object_from_string", ("collections.OrderedDict.fromkeys",)),
    ("import_modules_from_strings", (["os", "json"],)),
    ("import_modules_from_strings", (None,)),
    ("import_modules_from_strings", (3,)),
    ("import_modules_from_strings", ([3],)),
    ("import_modules_from_strings", ("no_such_module_xyz",)),
]
VERSIONS = [
    "1.2",
    "0.10.7",
    "1.2.3.4.5",
    "1.2rc1",
    "1.2.0a1",
    "1.2b3",
    "1.0.0rc0",
    "1.3.0.post5",
    "1.3.0.dev5",
    "2.0.0a1.dev1",
    "1.2rc1.post1",
    "1.2.post3.dev1",
    "2.1.0+cu118",
]
CASES += [("digit_version", (v,)) for v in VERSIONS]
CASES += [("digit_version", ("1.2", 6)), ("digit_version", ("1.2.3", 2))]


@pytest.mark.parametrize(("name", "args"), CASES, ids=[f"{n}{a!r:.40}" for n, a in CASES])
def test_same_results_and_error_types(name, args):
    mm_result, tr_result = both(name, *args)
    if mm_result[0] == "error":
        # treadle may raise a subclass (treadle.config's ConfigImportError is an ImportError):
        # what catches MMEngine's error catches treadle's.
        assert tr_result[0] == "error" and issubclass(tr_result[1], mm_result[1]), tr_result
    else:
        assert mm_result == tr_result


def test_apply_to_gives_the_same_results():
    data = OrderedDict(a=[1, "x", (2, 3)], b={"c": 4.0}, d=Pair(5, [6]))
    for args in [
        (data, lambda x: isinstance(x, int), lambda x: x * 10),
        ([1, [2]], lambda x: isinstance(x, list), len),
        ("ab", lambda x: isinstance(x, str), lambda x: x + "!"),
        ({1, 2}, lambda x: isinstance(x, int), lambda x: x + 1),
    ]:
        mm_result, tr_result = both("apply_to", *args)
        assert mm_result == tr_result and type(mm_result[1]) is type(tr_result[1])


def test_to_ntuple_gives_the_same_tuples():
    assert mm.to_ntuple(5)(1) == tr.to_ntuple(5)(1)


def test_is_method_overridden_gives_the_same_answers():
    class Base:
        def run(self): ...

    class Child(Base):
        def run(self): ...

    for args in [("run", Base, Child), ("run", Base, Child()), ("run", Base, Base)]:
        assert mm.is_method_overridden(*args) == tr.is_method_overridden(*args)


def test_scandir_lists_the_same_files(tmp_path):
    for name in ["a/x.py", "a/b/y.PY", "z.txt", "a/b/.hidden.py", ".folder/q.py"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    for kwargs in [
        {},
        {"recursive": True},
        {"suffix": ".py", "recursive": True},
        {"suffix": (".py", ".txt"), "recursive": True},
        {"suffix": ".py", "recursive": True, "case_sensitive": False},
    ]:
        assert sorted(mm.scandir(tmp_path, **kwargs)) == sorted(tr.scandir(tmp_path, **kwargs))


def test_timer_and_check_time_behave_alike():
    for api in (mm, tr):
        timer = api.Timer(start=False)
        assert timer.is_running is False
        assert outcome(timer.since_start)[1] is api.TimerError
        assert api.check_time(f"parity-{api.__name__}") == 0


def test_track_progress_rich_gives_the_same_results():
    import operator

    for kwargs in [
        {"tasks": [(1, 2), [3, 4]]},
        {"tasks": [(1, 2), (3, 4)], "nproc": 2},
    ]:
        assert mm.track_progress_rich(operator.add, **kwargs) == tr.track_progress_rich(
            operator.add, **kwargs
        )
    assert mm.track_progress_rich(dict, task_num=2) == tr.track_progress_rich(dict, task_num=2)
    for kwargs in [{"tasks": []}, {"tasks": [1], "task_num": 2}, {"tasks": [1], "nproc": 0}]:
        assert outcome(mm.track_progress_rich, abs, **kwargs) == outcome(
            tr.track_progress_rich, abs, **kwargs
        )


def test_track_functions_give_the_same_results():
    import io

    for api in (mm, tr):
        assert api.track_progress(abs, [-1, -2], file=io.StringIO()) == [1, 2]
        assert list(api.track_iter_progress((iter("ab"), 2), file=io.StringIO())) == ["a", "b"]
        assert api.track_parallel_progress(abs, [-1, -2, -3], 2, file=io.StringIO()) == [1, 2, 3]


def test_device_answers_are_the_same_here():
    for name in [
        "get_device",
        "is_cuda_available",
        "is_mps_available",
        "is_npu_available",
        "is_mlu_available",
        "is_npu_support_full_precision",
    ]:
        assert getattr(mm_device, name)() == getattr(tr_device, name)(), name


# Deliberate differences: each asserted, with why.


def test_errors_that_mmengine_asserts_are_assertions_with_a_message():
    # MMEngine uses `assert` (a message-less AssertionError); treadle raises the error the
    # mistake is, with the values in the message, as a class that is also an AssertionError.
    def raised(function, *args, **kwargs):
        kind, error = outcome(function, *args, **kwargs)
        assert kind == "error"
        return error

    assert raised(mm.slice_list, [1, 2, 3], 2) is AssertionError
    error = raised(tr.slice_list, [1, 2, 3], 2)
    assert issubclass(error, ValueError) and issubclass(error, AssertionError)
    assert raised(mm.track_progress, abs, (1, 2, 3)) is AssertionError
    error = raised(tr.track_progress, abs, (1, 2, 3))
    assert issubclass(error, TypeError) and issubclass(error, AssertionError)

    class Base:
        def run(self): ...

    assert raised(mm.is_method_overridden, "run", Base(), Base) is AssertionError
    error = raised(tr.is_method_overridden, "run", Base(), Base)
    assert issubclass(error, TypeError) and issubclass(error, AssertionError)

    @mm.deprecated_api_warning({"old": "new"})
    def mm_func(new=1):
        return new

    @tr.deprecated_api_warning({"old": "new"})
    def tr_func(new=1):
        return new

    assert raised(mm_func, old=1, new=2) is AssertionError
    error = raised(tr_func, old=1, new=2)
    assert issubclass(error, TypeError) and issubclass(error, AssertionError)


def test_difference_missing_prerequisites_are_named_in_the_error(capsys):
    # MMEngine prints the names and raises RuntimeError('Prerequisites not meet.'); treadle puts
    # the names in the RuntimeError, where logs and tracebacks keep them (and prints them too
    # under treadle.compat, utils.prerequisites.PRINT_MISSING).
    for api in (mm, tr):

        @api.requires_executable("no_such_program_xyz")
        def tool():
            return 1

        with pytest.raises(RuntimeError) as raised:
            tool()
        if api is mm:
            assert str(raised.value) == "Prerequisites not meet."
            assert "no_such_program_xyz" in capsys.readouterr().out
        else:
            assert "no_such_program_xyz" in str(raised.value)


def test_difference_bad_versions_raise_value_error_without_packaging():
    # MMEngine raises packaging's InvalidVersion (a ValueError); treadle parses PEP 440 itself.
    mm_kind, mm_error = outcome(mm.digit_version, "abc")
    assert mm_kind == "error" and issubclass(mm_error, ValueError)
    assert outcome(tr.digit_version, "abc") == ("error", ValueError)


def test_difference_max_cuda_memory_without_cuda_is_a_clear_runtime_error():
    if tr_device.is_cuda_available():
        pytest.skip("CUDA is available here")
    # MMEngine fails inside torch with an AttributeError on a CPU-only build.
    assert outcome(tr_device.get_max_cuda_memory) == ("error", RuntimeError)
