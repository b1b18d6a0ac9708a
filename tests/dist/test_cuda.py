"""CUDA: the NCCL backend's communication device, and tensors moved to the communication device
and back. Skipped without a GPU; the NCCL group uses as many processes as there are GPUs (up to
2)."""

import json

import pytest
import torch

from treadle.dist import cast_data_device, get_comm_device, get_data_device

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

CPU = torch.device("cpu")


def test_cast_between_cpu_and_gpu():
    gpu = torch.device("cuda", torch.cuda.current_device())
    data = {"a": torch.ones(2), "b": [torch.arange(3)]}
    on_gpu = cast_data_device(data, gpu)
    assert get_data_device(on_gpu) == gpu
    back = cast_data_device(on_gpu, CPU)
    assert back["b"][0].tolist() == [0, 1, 2]
    out = torch.zeros(2)
    cast_data_device(torch.full((2,), 5.0, device=gpu), CPU, out=out)
    assert out.tolist() == [5.0, 5.0]
    with pytest.raises(ValueError, match="all tensors must be on one device"):
        get_data_device([torch.ones(1), torch.ones(1, device=gpu)])


def test_comm_device_without_a_group_is_the_cpu():
    assert get_comm_device() == CPU


def run(helpers, tmp_path, world_size, backend):
    results = helpers.run_group(
        "cuda_scenarios.py",
        world_size,
        tmp_path,
        init_kwargs=json.dumps({"backend": backend}),
        gpus=True,
    )
    return lambda rank, name: helpers.scenario_value(results, rank, name)


def check_collectives(value, world_size, comm_device):
    ranks = range(world_size)
    for rank in ranks:
        assert value(rank, "scenario_comm_device")[0] == comm_device
        outcome = value(rank, "scenario_tensor_collectives_keep_devices")
        for device in ("cpu", "cuda"):
            assert outcome[f"all_reduce_{device}"] == (
                sum(r + 1 for r in ranks) / world_size,
                device,
            )
            assert outcome[f"all_gather_{device}"] == [(r, device) for r in ranks]
            assert outcome[f"broadcast_{device}"] == (world_size - 1.0, device)
        assert outcome["all_reduce_dict"] == {
            "gpu": (float(sum(r + 1 for r in ranks)), "cuda"),
            "cpu": ([sum(ranks)], "cpu"),
        }
        assert outcome["all_reduce_params"] == [
            ([float(sum(ranks))] * 3, "cuda"),
            ([float(world_size)] * 2, "cuda"),
        ]
        objects = value(rank, "scenario_object_collectives")
        assert objects["all_gather_object"] == list(ranks)
        assert objects["broadcast_object_list"] == ["rank 0"]
        dataset = [f"sample{index}" for index in range(7)]
        expected = dataset if rank == 0 else None
        assert (objects["collect_cpu"], objects["collect_gpu"]) == (expected, expected)


def test_cuda_tensors_in_a_gloo_group(helpers, tmp_path):
    check_collectives(run(helpers, tmp_path, 2, "gloo"), 2, "cpu")


def test_nccl_group(helpers, tmp_path):
    world_size = min(torch.cuda.device_count(), 2)
    check_collectives(run(helpers, tmp_path, world_size, "nccl"), world_size, "cuda:0")
