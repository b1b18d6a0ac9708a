"""Scenarios with CUDA tensors, run in a gloo group (tensors travel through the CPU and come
back to the GPU) and in an NCCL group (CPU tensors travel through the GPU and come back)."""

import torch

import treadle.dist as dist


def _where(tensor):
    return tensor.device.type


def scenario_comm_device(ctx):
    return str(dist.get_comm_device()), dist.get_backend()


def scenario_tensor_collectives_keep_devices(ctx):
    rank, world_size = ctx["rank"], ctx["world_size"]
    outcome = {}
    for device in ("cpu", "cuda"):
        data = torch.tensor([rank + 1.0], device=device)
        dist.all_reduce(data, op="mean")
        outcome[f"all_reduce_{device}"] = (data.item(), _where(data))
        gathered = dist.all_gather(torch.tensor([rank], device=device))
        outcome[f"all_gather_{device}"] = [(t.item(), _where(t)) for t in gathered]
        data = torch.tensor([rank * 1.0], device=device)
        dist.broadcast(data, src=world_size - 1)
        outcome[f"broadcast_{device}"] = (data.item(), _where(data))
    metrics = {"gpu": torch.tensor(rank + 1.0, device="cuda"), "cpu": torch.tensor([rank])}
    dist.all_reduce_dict(metrics)
    outcome["all_reduce_dict"] = {key: (v.tolist(), _where(v)) for key, v in metrics.items()}
    params = [torch.ones(3, device="cuda") * rank, torch.ones(2, device="cuda")]
    dist.all_reduce_params(params)
    outcome["all_reduce_params"] = [(p.tolist(), _where(p)) for p in params]
    return outcome


def scenario_object_collectives(ctx):
    rank = ctx["rank"]
    objects = [f"rank {rank}"]
    dist.broadcast_object_list(objects)
    part = [f"sample{index}" for index in range(7)][rank :: ctx["world_size"]]
    return {
        "all_gather_object": dist.all_gather_object(rank),
        "broadcast_object_list": objects,
        "collect_cpu": dist.collect_results(part, 7),
        "collect_gpu": dist.collect_results(part, 7, device="gpu"),
    }
