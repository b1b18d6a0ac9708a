"""Without an initialized process group every function answers for one process: rank 0 of 1,
collectives return (or leave) their input, barrier returns. The same code runs everywhere."""

import random
from unittest import mock

import numpy as np
import pytest
import torch
import torch.distributed

import treadle.dist as dist


@pytest.fixture(autouse=True)
def not_initialized():
    assert not torch.distributed.is_initialized()


def test_info():
    assert dist.is_distributed() is False
    assert dist.get_dist_info() == (0, 1)
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    assert dist.is_main_process() is True
    assert dist.get_backend() is None
    assert dist.get_default_group() is None


def test_local_group_functions():
    dist.init_local_group(node_rank=0, num_gpus_per_node=8)  # nothing to create
    assert dist.get_local_group() is None
    assert (dist.get_local_rank(), dist.get_local_size()) == (0, 1)


def test_devices():
    assert dist.get_comm_device() == torch.device("cpu")
    assert dist.get_data_device([torch.ones(1)]) == torch.device("cpu")


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "product", "band", "Mean"])
def test_all_reduce_leaves_the_tensor(op):
    data = torch.tensor([3, 5])
    expected = data.clone()
    assert dist.all_reduce(data, op=op) is None
    assert torch.equal(data, expected)


@pytest.mark.parametrize("op", ["avg", "average", "", None])
def test_unsupported_op_is_an_error_without_a_group_too(op):
    # Checked in one process as in many: a typo fails on the developer's laptop already.
    with pytest.raises(ValueError, match=r"unsupported reduce op .*use one of 'sum', 'mean'"):
        dist.all_reduce(torch.ones(1), op=op)
    with pytest.raises(ValueError, match="'product', 'min', 'max'"):
        dist.all_reduce_dict({"a": torch.ones(1)}, op=op)
    with pytest.raises(ValueError, match="unsupported reduce op"):
        dist.all_reduce_params([torch.ones(1)], op=op)


def test_gathers_return_a_list_of_the_input():
    data = torch.arange(3)
    assert dist.all_gather(data) == [data]
    assert dist.all_gather(data)[0] is data
    assert dist.gather(data)[0] is data
    assert dist.gather(data, dst=0) == [data]
    assert dist.all_gather_object({"a": 1}) == [{"a": 1}]
    assert dist.gather_object("x", dst=0) == ["x"]


def test_broadcasts_leave_their_input():
    data = torch.arange(3)
    dist.broadcast(data, src=0)
    assert data.tolist() == [0, 1, 2]
    objects = ["foo", 12, {1: 2}]
    dist.broadcast_object_list(objects)
    assert objects == ["foo", 12, {1: 2}]


def test_broadcast_object_list_needs_a_list():
    with pytest.raises(TypeError, match=r"broadcast_object_list needs a list.*got tuple"):
        dist.broadcast_object_list(("foo",))
    # MMEngine asserts there: the error is an AssertionError too.
    with pytest.raises(AssertionError, match=r"broadcast_object_list needs a list.*got str"):
        dist.broadcast_object_list("foo")


def test_barrier_returns():
    assert dist.barrier() is None


def test_sync_random_seed_follows_numpys_random_stream():
    # As MMEngine's: np.random.seed makes it reproducible.
    np.random.seed(7)
    first = dist.sync_random_seed()
    np.random.seed(7)
    torch_state = torch.get_rng_state()
    python_state = random.getstate()
    assert dist.sync_random_seed() == first
    assert torch.equal(torch.get_rng_state(), torch_state)  # torch's stream is left alone
    assert random.getstate() == python_state  # and so is Python's
    assert 0 <= first < 2**31
    assert isinstance(first, int)
    with mock.patch("numpy.random.randint", return_value=10):
        assert dist.sync_random_seed() == 10


def test_all_reduce_dict_and_params_leave_their_input():
    data = {"loss": torch.tensor(1.5), "count": torch.tensor([2, 3])}
    loss = data["loss"]
    dist.all_reduce_dict(data, op="mean")
    assert data["loss"] is loss
    assert data["count"].tolist() == [2, 3]
    params = [torch.nn.Parameter(torch.ones(2)), torch.zeros(3)]
    dist.all_reduce_params(params)
    dist.all_reduce_params(iter(params), coalesce=False, bucket_size_mb=1)
    assert params[0].tolist() == [1.0, 1.0]
    assert params[1].tolist() == [0.0, 0.0, 0.0]


def test_all_reduce_dict_bad_input():
    with pytest.raises(TypeError, match="needs a dict of tensors, got list"):
        dist.all_reduce_dict([torch.ones(1)])
    # MMEngine asserts there: the error is an AssertionError too.
    with pytest.raises(AssertionError, match="all_reduce_dict needs a dict of tensors, got str"):
        dist.all_reduce_dict("foo")


def test_all_reduce_dict_of_non_tensors_in_one_process_warns():
    # MMEngine leaves such a dict alone in one process; several processes would fail on it.
    data = {"loss": 1.5, "name": "x", "ok": torch.ones(1)}
    with pytest.warns(UserWarning) as record:
        dist.all_reduce_dict(data)
    assert [str(warning.message) for warning in record] == [
        f"all_reduce_dict needs tensor values, but data[{key!r}] is {kind}: a single process "
        "leaves data as it is, several processes will fail"
        for key, kind in (("loss", "float"), ("name", "str"))
    ]
    assert data["loss"] == 1.5 and data["name"] == "x"


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_collect_results_keeps_size_results(device):
    results = ["a", "b", "c", "pad"]
    assert dist.collect_results(results, 3, device=device) == ["a", "b", "c"]
    assert dist.collect_results_cpu(results, 4) == results
    assert dist.collect_results_cpu(results, 2, tmpdir="unused") == ["a", "b"]
    assert dist.collect_results_gpu(results, 0) == []


@pytest.mark.parametrize("device", ["cpu", "gpu", "npu"])
def test_collect_results_size_larger_than_results(device):
    message = r"size=5 is larger than the 3 results gathered from 1 process\(es\) \(3\)"
    with pytest.raises(ValueError, match=message):
        dist.collect_results(["a", "b", "c"], 5, device=device)
    with pytest.raises(ValueError, match="a metric that keeps one result per batch"):
        dist.collect_results_cpu(["a", "b", "c"], 4)
    with pytest.raises(ValueError, match="size=4 is larger than the 3 results"):
        dist.collect_results_gpu(["a", "b", "c"], 4)


def test_collect_results_bad_arguments():
    with pytest.raises(ValueError, match="device must be one of 'cpu', 'gpu', 'npu', got 'tpu'"):
        dist.collect_results([1], 1, device="tpu")
    with pytest.raises(ValueError, match="tmpdir='/tmp/x' is for device='cpu' only"):
        dist.collect_results([1], 1, device="gpu", tmpdir="/tmp/x")
    with pytest.raises(ValueError, match="device='npu' collects through the communication"):
        dist.collect_results([1], 1, device="npu", tmpdir="/tmp/x")
    with pytest.raises(ValueError, match="size must not be negative, got -1"):
        dist.collect_results([1], -1)
    with pytest.raises(TypeError, match="size must be an integer, got float"):
        dist.collect_results([1], 1.0)


def test_master_only_runs_in_a_single_process():
    @dist.master_only
    def double(value):
        """Doubles."""
        return value * 2

    assert double(4) == 8
    assert double.__doc__ == "Doubles."


def test_public_api():
    expected = {
        "init_dist",
        "infer_launcher",
        "init_local_group",
        "get_backend",
        "get_default_group",
        "get_dist_info",
        "get_rank",
        "get_world_size",
        "get_local_rank",
        "get_local_size",
        "get_local_group",
        "is_main_process",
        "is_distributed",
        "master_only",
        "all_reduce",
        "all_gather",
        "all_gather_object",
        "broadcast",
        "broadcast_object_list",
        "gather",
        "gather_object",
        "barrier",
        "sync_random_seed",
        "all_reduce_dict",
        "all_reduce_params",
        "collect_results",
        "collect_results_cpu",
        "collect_results_gpu",
        "get_comm_device",
        "get_data_device",
        "cast_data_device",
    }
    assert set(dist.__all__) == expected | {"__version__"}
    for name in expected:
        assert callable(getattr(dist, name))
