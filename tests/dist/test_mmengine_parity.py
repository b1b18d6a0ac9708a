"""treadle.dist next to MMEngine 0.10.7's mmengine.dist: the same calls on the same inputs give
the same results (values, dtypes, shapes, in-place changes, return values, exception types).

Run in the environment that has MMEngine (``hatch run mmengine:pytest
tests/dist/test_mmengine_parity.py``); skipped elsewhere. Part one calls both libraries in this
process, with no process group; part two runs workers/parity_scenarios.py in real 2- and
3-process gloo groups, where every rank calls both libraries.

Differences are deliberate only where treadle's README lists them; each is asserted explicitly.
"""

import ast
import collections
import importlib.util
import multiprocessing
import warnings
from pathlib import Path

import pytest

pytest.importorskip("mmengine")

import mmengine.dist as mmengine_dist
import numpy as np  # installed with MMEngine
import torch

import treadle.dist as treadle_dist

WORKERS = Path(__file__).parent / "workers"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"treadle_parity_{name}", WORKERS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


common = _load("parity_common")
outcome = common.outcome
Point = collections.namedtuple("Point", "x y")
CPU = torch.device("cpu")


def run_both(case):
    return outcome(case, mmengine_dist), outcome(case, treadle_dist)


# --- part one: a single process, no process group ---------------------------------------------


def _quietly(function, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args)


def _after(call, *tensors):
    """What ``call`` returned, then the tensors it may have changed in place."""
    return call(), *tensors


def _reduce(op, make=lambda: torch.tensor([1.5, -2.0])):
    def case(dist):
        data = make()
        return _after(lambda: dist.all_reduce(data, op=op), data)

    return case


def _cast_with_out(data_of, out_of):
    def case(dist):
        out = out_of()
        return dist.cast_data_device(data_of(), CPU, out=out), out

    return case


def _identity_kept(dist):
    data = [torch.ones(1), {"a": torch.zeros(2)}]
    cast = dist.cast_data_device(data, CPU)
    return cast[0] is data[0], cast[1]["a"] is data[1]["a"], cast is data


def _all_reduce_dict(op):
    def case(dist):
        data = {"loss": torch.tensor(0.5), "count": torch.tensor([3, 4])}
        loss = data["loss"]
        returned = dist.all_reduce_dict(data, op=op)
        return returned, data, data["loss"] is loss

    return case


def _all_reduce_params(**kwargs):
    def case(dist):
        params = [torch.nn.Parameter(torch.ones(2)), torch.arange(3)]
        returned = dist.all_reduce_params(iter(params), **kwargs)
        return returned, params

    return case


def _master_only(dist):
    calls = []

    @dist.master_only
    def record(value):
        """Records."""
        calls.append(value)
        return value * 2

    return record(21), calls, record.__name__, record.__doc__


def _all_gather_returns_input(dist):
    data = torch.arange(3)
    gathered = dist.all_gather(data)
    return gathered, gathered[0] is data


def _seed(dist):
    seed = dist.sync_random_seed()
    return type(seed).__name__, 0 <= seed < 2**31


SINGLE_PROCESS = {
    # who am I
    "get_dist_info": lambda dist: dist.get_dist_info(),
    "get_rank": lambda dist: dist.get_rank(),
    "get_world_size": lambda dist: dist.get_world_size(),
    "get_local_rank": lambda dist: dist.get_local_rank(),
    "get_local_size": lambda dist: dist.get_local_size(),
    "get_local_group": lambda dist: dist.get_local_group(),
    "is_main_process": lambda dist: dist.is_main_process(),
    "is_distributed": lambda dist: dist.is_distributed(),
    "get_backend": lambda dist: dist.get_backend(),
    "get_default_group": lambda dist: dist.get_default_group(),
    "infer_launcher": lambda dist: dist.infer_launcher(),
    "master_only": _master_only,
    "init_dist_unknown_launcher": lambda dist: dist.init_dist("torchrun", backend="gloo"),
    "init_dist_without_launcher_variables": lambda dist: dist.init_dist("pytorch", "gloo"),
    # all_reduce: the input is left as it is
    **{f"all_reduce_{op}": _reduce(op) for op in ("sum", "mean", "product", "min", "max", "SUM")},
    **{
        f"all_reduce_{op}_integers": _reduce(op, lambda: torch.tensor([5, -3]))
        for op in ("mean", "band", "bor", "bxor")
    },
    "all_reduce_scalar": _reduce("mean", lambda: torch.tensor(2.5, dtype=torch.float64)),
    "all_reduce_unsupported_op": _reduce("avg"),
    "all_reduce_op_not_a_string": _reduce(None),
    # gathering and broadcasting: the input, in a list
    "all_gather": _all_gather_returns_input,
    "all_gather_object": lambda dist: dist.all_gather_object({"a": 1}),
    "gather": lambda dist: dist.gather(torch.tensor([1.0, 2.0])),
    "gather_dst_1": lambda dist: dist.gather(torch.tensor([1.0]), dst=1),
    "gather_object": lambda dist: dist.gather_object(("x", 1)),
    "gather_object_dst_1": lambda dist: dist.gather_object("x", dst=1),
    "broadcast": lambda dist: (lambda t: _after(lambda: dist.broadcast(t), t))(torch.ones(2)),
    "broadcast_src_1": lambda dist: (lambda t: _after(lambda: dist.broadcast(t, 1), t))(
        torch.arange(2)
    ),
    "broadcast_object_list": lambda dist: (
        lambda objects: (dist.broadcast_object_list(objects), objects)
    )(["a", {"b": 2}]),
    "broadcast_object_list_tuple": lambda dist: dist.broadcast_object_list(("a",)),
    "barrier": lambda dist: dist.barrier(),
    "sync_random_seed": _seed,
    # many tensors at once
    "all_reduce_dict_sum": _all_reduce_dict("sum"),
    "all_reduce_dict_mean": _all_reduce_dict("mean"),
    "all_reduce_dict_empty": lambda dist: dist.all_reduce_dict({}),
    "all_reduce_dict_unsupported_op": _all_reduce_dict("avg"),
    "all_reduce_dict_of_a_list": lambda dist: dist.all_reduce_dict([torch.ones(1)]),
    # Nothing to reduce in one process, as in MMEngine (treadle warns: a group would fail).
    "all_reduce_dict_of_numbers": lambda dist: _quietly(dist.all_reduce_dict, {"loss": 1.5}),
    "all_reduce_params": _all_reduce_params(),
    "all_reduce_params_per_tensor": _all_reduce_params(coalesce=False, bucket_size_mb=1),
    "all_reduce_params_unsupported_op": _all_reduce_params(op="avg"),
    "all_reduce_params_of_numbers": lambda dist: dist.all_reduce_params([1.0, 2.0]),
    # collect_results: the first size results
    "collect_results_truncates": lambda dist: dist.collect_results(["a", "b", "c", "pad"], 3),
    "collect_results_exact_size": lambda dist: dist.collect_results(["a", "b"], 2),
    "collect_results_size_0": lambda dist: dist.collect_results(["a"], 0),
    "collect_results_size_larger": lambda dist: dist.collect_results([{"batch_size": 4}], 100),
    "collect_results_none_results": lambda dist: dist.collect_results([None, 1, None], 3),
    "collect_results_gpu": lambda dist: dist.collect_results(["a", "b", "c"], 2, device="gpu"),
    "collect_results_npu": lambda dist: dist.collect_results(["a", "b", "c"], 2, device="npu"),
    "collect_results_tmpdir": lambda dist: dist.collect_results([1, 2], 1, tmpdir="unused"),
    "collect_results_cpu": lambda dist: dist.collect_results_cpu([1, 2, 3], 2),
    "collect_results_gpu_function": lambda dist: dist.collect_results_gpu([1, 2, 3], 5),
    "collect_results_float_size": lambda dist: dist.collect_results([1, 2], 1.0),
    "collect_results_negative_size": lambda dist: dist.collect_results([1, 2, 3], -1),
    "collect_results_tuple": lambda dist: dist.collect_results((1, 2, 3), 2),
    "collect_results_unknown_device": lambda dist: dist.collect_results([1], 1, device="tpu"),
    "collect_results_gpu_with_tmpdir": lambda dist: dist.collect_results(
        [1], 1, device="gpu", tmpdir="x"
    ),
    # devices
    "get_comm_device": lambda dist: dist.get_comm_device(),
    "get_data_device_tensor": lambda dist: dist.get_data_device(torch.ones(1)),
    "get_data_device_nested": lambda dist: dist.get_data_device(
        {"a": [torch.ones(1)], "b": (torch.zeros(2), {"c": torch.ones(3)})}
    ),
    "get_data_device_meta": lambda dist: dist.get_data_device([torch.empty(1, device="meta")]),
    "get_data_device_two_devices": lambda dist: dist.get_data_device(
        [torch.ones(1), torch.empty(1, device="meta")]
    ),
    "get_data_device_empty_list": lambda dist: dist.get_data_device([]),
    "get_data_device_empty_dict": lambda dist: dist.get_data_device({}),
    "get_data_device_number": lambda dist: dist.get_data_device(1),
    "get_data_device_string": lambda dist: dist.get_data_device("ab"),
    "get_data_device_ndarray": lambda dist: dist.get_data_device(np.ones(2)),
    "get_data_device_list_of_numbers": lambda dist: dist.get_data_device([torch.ones(1), 2]),
    "cast_data_device_tensor": lambda dist: dist.cast_data_device(torch.arange(3), CPU),
    "cast_data_device_to_meta": lambda dist: (
        dist.cast_data_device({"a": [torch.ones(2)]}, torch.device("meta"))["a"][0].device
    ),
    "cast_data_device_containers": lambda dist: dist.cast_data_device(
        {"list": [torch.ones(1)], "tuple": (torch.zeros(1),), "dict": {"t": torch.ones(2)}}, CPU
    ),
    "cast_data_device_ordered_dict": lambda dist: (
        type(dist.cast_data_device(collections.OrderedDict(a=torch.ones(1)), CPU)).__name__
    ),
    "cast_data_device_keeps_tensors_already_there": _identity_kept,
    "cast_data_device_out_tensor": _cast_with_out(lambda: torch.arange(3.0), lambda: torch.ones(3)),
    "cast_data_device_out_nested": _cast_with_out(
        lambda: {"a": [torch.tensor([1, 2])], "b": (torch.tensor(3.0),)},
        lambda: {"a": [torch.zeros(2, dtype=torch.int64)], "b": (torch.tensor(0.0),)},
    ),
    "cast_data_device_out_other_type": _cast_with_out(
        lambda: [torch.ones(1)], lambda: (torch.ones(1),)
    ),
    "cast_data_device_out_set": _cast_with_out(lambda: {1.0}, lambda: {2.0}),
    "cast_data_device_out_dict_of_other_length": _cast_with_out(
        lambda: {"a": torch.ones(1)}, lambda: {"a": torch.ones(1), "b": torch.ones(1)}
    ),
    "cast_data_device_out_list_of_other_length": _cast_with_out(
        lambda: [torch.ones(1), torch.ones(1)], lambda: [torch.zeros(1)]
    ),
    "cast_data_device_empty_list": lambda dist: dist.cast_data_device([], CPU),
    "cast_data_device_empty_dict": lambda dist: dist.cast_data_device({}, CPU),
    "cast_data_device_number": lambda dist: dist.cast_data_device(1, CPU),
    "cast_data_device_strings": lambda dist: dist.cast_data_device(["ab"], CPU),
    "cast_data_device_ndarray": lambda dist: dist.cast_data_device(np.ones(2), CPU),
    "cast_data_device_namedtuple": lambda dist: dist.cast_data_device(
        Point(torch.ones(1), torch.zeros(1)), CPU
    ),
}


def _raises(kind):
    return ("raises", kind)


def _ok(*value):
    """An outcome without an exception: ``_ok()`` is any result, ``_ok(value)`` that one."""
    return ("ok", *(common.snapshot(item) for item in value))


UNCHANGED = torch.tensor([1.5, -2.0])  # what _reduce's input stays in one process

# Deliberate differences (treadle's README, "Differences from MMEngine 0.10"):
# {case: (MMEngine's outcome, treadle's outcome)}.
SINGLE_PROCESS_DIFFERENCES = {
    # Every function works without a group: MMEngine's get_default_group raises there.
    "get_default_group": (_raises("ValueError"), _ok(None)),
    # An unsupported op is an error in one process as in many (MMEngine ignores the op when
    # there is nothing to reduce, and raises ValueError in a group).
    "all_reduce_unsupported_op": (_ok((None, UNCHANGED)), _raises("ValueError")),
    "all_reduce_op_not_a_string": (_ok((None, UNCHANGED)), _raises("ValueError")),
    "all_reduce_dict_unsupported_op": (_ok(), _raises("ValueError")),
    "all_reduce_params_unsupported_op": (_ok(), _raises("ValueError")),
    # A TypeError that is also MMEngine's AssertionError (DistArgumentTypeError), raised
    # whether or not `python -O` removes asserts.
    "all_reduce_dict_of_a_list": (_raises("AssertionError"), _raises("DistArgumentTypeError")),
    "broadcast_object_list_tuple": (
        _raises("AssertionError"),
        _raises("DistArgumentTypeError"),
    ),
    "collect_results_gpu_with_tmpdir": (_raises("AssertionError"), _raises("ValueError")),
    # A bad argument value is a ValueError (MMEngine: NotImplementedError).
    "collect_results_unknown_device": (_raises("NotImplementedError"), _raises("ValueError")),
    # A size larger than the results is an error (MMEngine returns what there is).
    "collect_results_size_larger": (_ok([{"batch_size": 4}]), _raises("ValueError")),
    "collect_results_gpu_function": (_ok([1, 2, 3]), _raises("ValueError")),
    # A negative size is an error, not a slice dropping the last results.
    "collect_results_negative_size": (_ok([1, 2]), _raises("ValueError")),
    # The results are always a list (MMEngine slices the input: a tuple stays a tuple in one
    # process, and becomes a list in a group).
    "collect_results_tuple": (_ok((1, 2)), _ok([1, 2])),
    # 'pytorch' without torchrun's variables is a RuntimeError naming the missing variable
    # (MMEngine: a KeyError from os.environ).
    "init_dist_without_launcher_variables": (_raises("KeyError"), _raises("RuntimeError")),
    # out= of another length is an error (MMEngine's zip silently casts a prefix).
    "cast_data_device_out_list_of_other_length": (
        _ok(([torch.ones(1)], [torch.ones(1)])),
        _raises("ValueError"),
    ),
    # Namedtuples are rebuilt field by field (MMEngine passes one list to their constructor).
    "cast_data_device_namedtuple": (
        _raises("TypeError"),
        _ok(Point(torch.ones(1), torch.zeros(1))),
    ),
}


@pytest.fixture
def restore_start_method():
    # MMEngine's init_dist sets the multiprocessing start method before checking anything.
    before = multiprocessing.get_start_method(allow_none=True)
    yield
    multiprocessing.set_start_method(before, force=True)


@pytest.mark.parametrize("name", sorted(SINGLE_PROCESS))
def test_single_process(name, restore_start_method):
    mmengine_outcome, treadle_outcome = run_both(SINGLE_PROCESS[name])
    if name in SINGLE_PROCESS_DIFFERENCES:
        expected_mmengine, expected_treadle = SINGLE_PROCESS_DIFFERENCES[name]
        assert mmengine_outcome[: len(expected_mmengine)] == expected_mmengine
        assert treadle_outcome[: len(expected_treadle)] == expected_treadle
    else:
        assert treadle_outcome == mmengine_outcome


def test_differences_are_cases():
    assert set(SINGLE_PROCESS_DIFFERENCES) <= set(SINGLE_PROCESS)


@pytest.mark.parametrize(
    ("variables", "launcher"),
    [
        ({}, "none"),
        ({"WORLD_SIZE": "2", "RANK": "0"}, "pytorch"),
        ({"WORLD_SIZE": "2", "SLURM_NTASKS": "4"}, "pytorch"),
        ({"SLURM_NTASKS": "4"}, "slurm"),
        ({"SLURM_NTASKS": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0"}, "slurm"),
        ({"OMPI_COMM_WORLD_LOCAL_RANK": "0"}, "mpi"),
        ({"RANK": "0"}, "none"),
    ],
)
def test_infer_launcher(monkeypatch, variables, launcher):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert mmengine_dist.infer_launcher() == treadle_dist.infer_launcher() == launcher


def test_same_public_names():
    assert set(mmengine_dist.__all__) == set(treadle_dist.__all__) - {"__version__"}


# --- part two: real process groups ------------------------------------------------------------

WORLD_SIZES = [2, 3]
GROUP_SCENARIOS = [
    node.name
    for node in ast.parse((WORKERS / "parity_scenarios.py").read_text()).body
    if isinstance(node, ast.FunctionDef) and node.name.startswith("scenario_")
]


@pytest.fixture(scope="module")
def parity_results(tmp_path_factory, helpers):
    """``results(world_size)``: what workers/parity_scenarios.py returned on each rank of a
    gloo group of that size (started once per module)."""
    cache = {}

    def results(world_size):
        if world_size not in cache:
            out_dir = tmp_path_factory.mktemp(f"parity{world_size}")
            cache[world_size] = helpers.run_group("parity_scenarios.py", world_size, out_dir)
        return cache[world_size]

    return results


def _pairs(value, path=""):
    """Every ``(path, {"mmengine": ..., "treadle": ...})`` in a scenario's result."""
    if isinstance(value, dict) and set(value) == {"mmengine", "treadle"}:
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _pairs(item, f"{path}/{key}" if path else str(key))
    else:
        raise AssertionError(f"unexpected scenario result at {path!r}: {value!r}")


def _local_variables(rank, world_size, pair):
    # Before init_local_group treadle reads LOCAL_RANK / LOCAL_WORLD_SIZE (MMEngine raises).
    return pair["mmengine"] == _raises("RuntimeError") and pair["treadle"][0] == "ok"


def _values_without_dtypes(snapshot):
    if isinstance(snapshot, tuple) and snapshot and snapshot[0] == "tensor":
        return ("tensor", snapshot[2], snapshot[3])  # 3 == 3.0: equal values of two dtypes
    if isinstance(snapshot, tuple) and len(snapshot) == 2 and isinstance(snapshot[1], dict):
        return {key: _values_without_dtypes(item) for key, item in snapshot[1].items()}
    return snapshot


def _keeps_dtypes(rank, world_size, pair):
    # all_reduce_dict keeps each key's dtype; MMEngine returns the dict's promoted dtype.
    mmengine_dict, treadle_dict = pair["mmengine"][1][1], pair["treadle"][1][1]
    assert mmengine_dict["correct"][1] == "torch.float32"
    assert treadle_dict["correct"][1] == "torch.int64"
    assert treadle_dict["loss"][1] == mmengine_dict["loss"][1] == "torch.float32"
    return _values_without_dtypes(pair["mmengine"][1]) == _values_without_dtypes(pair["treadle"][1])


def _keeps_none_results(rank, world_size, pair):
    # MMEngine interleaves the parts with zip_longest and drops every None, the fill values
    # and None results alike; treadle keeps the results that are None.
    if rank != 0:
        return pair["mmengine"] == pair["treadle"]
    names = [f"rank{r}" for r in range(world_size)]
    everything = [None] * world_size + names
    for way in pair["treadle"][1][1]:
        assert pair["mmengine"][1][1][way] == ("list", names), way
        assert pair["treadle"][1][1][way] == ("list", everything), way
    return True


def _tmpdir_kept(rank, world_size, pair):
    # treadle removes only its part files from a given tmpdir; MMEngine removes the directory.
    mmengine, treadle = pair["mmengine"][1][1], pair["treadle"][1][1]
    return (mmengine["tmpdir_exists"], treadle["tmpdir_exists"], treadle["tmpdir_files"]) == (
        False,
        True,
        ("list", []),
    )


def _no_dist_test_directory(rank, world_size, pair):
    # Without tmpdir MMEngine leaves '.dist_test' in the working directory; treadle no file.
    return pair["mmengine"] == _ok([".dist_test"]) and pair["treadle"] == _ok([])


def _size_larger_is_an_error(rank, world_size, pair):
    # Fewer results than size: MMEngine returns them on rank 0, treadle raises ValueError.
    if rank != 0:
        return pair["mmengine"] == pair["treadle"] == _ok(None)
    return pair["mmengine"][0] == "ok" and pair["treadle"] == _raises("ValueError")


GROUP_DIFFERENCES = {
    ("scenario_collect_results_one_result_per_batch", ""): _size_larger_is_an_error,
    ("scenario_local_rank_before_init_local_group", "rank"): _local_variables,
    ("scenario_local_rank_before_init_local_group", "size"): _local_variables,
    ("scenario_all_reduce_dict_mixed_dtypes", ""): _keeps_dtypes,
    ("scenario_collect_results_with_none_results", ""): _keeps_none_results,
    ("scenario_collect_results_tmpdir_left_behind", "tmpdir"): _tmpdir_kept,
    ("scenario_collect_results_tmpdir_left_behind", "no_tmpdir"): _no_dist_test_directory,
}
# Where both libraries raise, and should.
EXPECTED_ERRORS = {
    ("scenario_all_reduce_unsupported_op", ""): "ValueError",
    ("scenario_local_rank_before_init_local_group", "group"): "RuntimeError",
}


@pytest.mark.parametrize("name", GROUP_SCENARIOS)
@pytest.mark.parametrize("world_size", WORLD_SIZES, ids=lambda size: f"{size}ranks")
def test_group(world_size, name, parity_results, helpers):
    results = parity_results(world_size)
    for rank in range(world_size):
        scenario = helpers.scenario_value(results, rank, name)
        for path, pair in _pairs(scenario):
            where = f"{name} {path} on rank {rank}"
            if (name, path) in GROUP_DIFFERENCES:
                assert GROUP_DIFFERENCES[name, path](rank, world_size, pair), (where, pair)
                continue
            assert pair["treadle"] == pair["mmengine"], where
            # Equal is not enough: both libraries failing the same way would be equal too.
            error = EXPECTED_ERRORS.get((name, path))
            expected = _raises(error) if error else _ok()
            assert pair["treadle"][: len(expected)] == expected, where


def test_group_differences_are_scenarios():
    assert {name for name, _ in GROUP_DIFFERENCES} <= set(GROUP_SCENARIOS)
