"""Scenarios run by every rank of a real gloo group (see tests/support/gloo_rank_runner.py).
Each returns plain Python values that the tests compare with what the rank and world size imply.

Scenarios run in order on all ranks and each is a sequence of collectives every rank enters,
so a scenario that fails on one rank fails (or times out) on the others too, and says where.
"""

import contextlib
import os
import warnings

import numpy as np
import torch
import torch.distributed

import treadle.dist as dist


@contextlib.contextmanager
def counting(name):
    """Count the calls of torch.distributed.<name> (still calling the real one)."""
    real = getattr(torch.distributed, name)
    calls = []

    def counted(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    setattr(torch.distributed, name, counted)
    try:
        yield calls
    finally:
        setattr(torch.distributed, name, real)


def error_of(function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except Exception as error:
        return type(error).__name__, str(error)
    return None


def scenario_info(ctx):
    return {
        "dist_info": dist.get_dist_info(),
        "rank": dist.get_rank(),
        "world_size": dist.get_world_size(),
        "is_distributed": dist.is_distributed(),
        "is_main_process": dist.is_main_process(),
        "backend": dist.get_backend(),
        "default_group_is_world": dist.get_default_group() is torch.distributed.group.WORLD,
        "comm_device": str(dist.get_comm_device()),
        "infer_launcher": dist.infer_launcher(),
        "env_rank": os.environ["RANK"],
    }


def scenario_all_reduce_ops(ctx):
    reduced = {}
    for op in ("sum", "mean", "max", "min", "product", "SUM"):
        data = torch.tensor([ctx["rank"] + 1.0, 2.0 * (ctx["rank"] + 1)])
        dist.all_reduce(data, op=op)
        reduced[op] = data.tolist()
    integers = torch.tensor([ctx["rank"] + 1, 10 * (ctx["rank"] + 1)])
    dist.all_reduce(integers, op="mean")
    reduced["int_mean"] = (integers.tolist(), str(integers.dtype))
    bits = torch.tensor([1 << ctx["rank"]])
    dist.all_reduce(bits, op="bor")
    reduced["bor"] = bits.tolist()
    # A transposed view is not contiguous: reduced through a contiguous copy, written back.
    matrix = (torch.arange(6.0).reshape(2, 3) * (ctx["rank"] + 1)).t()
    dist.all_reduce(matrix)
    reduced["transposed"] = matrix.tolist()
    return reduced


def scenario_all_reduce_unsupported_op(ctx):
    # Raised before any communication, so the ranks stay in step.
    return error_of(dist.all_reduce, torch.ones(1), op="avg")


def scenario_all_reduce_dict_of_non_tensors(ctx):
    # Refused before any communication (one process only warns), so the ranks stay in step.
    return error_of(dist.all_reduce_dict, {"loss": 1.5})


def scenario_all_gather(ctx):
    gathered = dist.all_gather(torch.tensor([ctx["rank"], 10 * ctx["rank"]]))
    objects = dist.all_gather_object({"rank": ctx["rank"], "text": "x" * ctx["rank"]})
    return [tensor.tolist() for tensor in gathered], objects


def scenario_gather_to_last_rank(ctx):
    last = ctx["world_size"] - 1
    gathered = dist.gather(torch.tensor([ctx["rank"] * 2.0]), dst=last)
    objects = dist.gather_object(("from", ctx["rank"]), dst=last)
    first = dist.gather_object(ctx["rank"])  # default dst=0
    return [tensor.tolist() for tensor in gathered], objects, first


def scenario_broadcast_from_last_rank(ctx):
    last = ctx["world_size"] - 1
    data = torch.full((2, 2), float(ctx["rank"]))
    dist.broadcast(data, src=last)
    objects = [f"rank {ctx['rank']}", {"n": ctx["rank"]}]
    dist.broadcast_object_list(objects, src=last)
    first = torch.tensor([ctx["rank"] + 7])
    dist.broadcast(first)  # default src=0
    return data.tolist(), objects, first.tolist()


def scenario_sync_random_seed(ctx):
    np.random.seed(1000 + ctx["rank"])  # every rank draws a different number locally
    local_draw = int(np.random.randint(2**31))
    np.random.seed(1000 + ctx["rank"])
    return dist.sync_random_seed(), local_draw


def scenario_barrier(ctx):
    return dist.barrier()


def scenario_all_reduce_dict_one_collective(ctx):
    rank = ctx["rank"]
    data = {f"metric_{i:03d}": torch.tensor(float(rank + i)) for i in range(100)}
    with counting("all_reduce") as calls:
        dist.all_reduce_dict(data, op="sum")
    return len(calls), {key: value.item() for key, value in data.items()}


def scenario_all_reduce_dict_mixed(ctx):
    rank = ctx["rank"]
    # Built in a rank-dependent order: keys are matched by name, not insertion order.
    items = [
        ("count", torch.tensor([rank + 1, 3 * (rank + 1)])),
        ("loss", torch.tensor([[rank + 0.5, 1.0], [2.0, rank * 2.0]], dtype=torch.float64)),
        ("acc", torch.tensor(rank / 4, dtype=torch.float32)),
    ]
    if rank % 2:
        items.reverse()
    data = dict(items)
    with counting("all_reduce") as calls:
        dist.all_reduce_dict(data, op="mean")
    return len(calls), {
        key: (value.tolist(), str(value.dtype), list(value.shape)) for key, value in data.items()
    }


def _parameters(rank):
    # 5 float32 tensors of 100k elements (0.4 MB each), 2 float64 and one int64 buffer.
    floats = [torch.nn.Parameter(torch.full((100_000,), float(rank + i))) for i in range(5)]
    doubles = [torch.full((3, 4), rank + 0.25 * i, dtype=torch.float64) for i in range(2)]
    return [*floats, *doubles, torch.tensor([rank, 1])]


def _summary(tensors):
    return [(tensor.flatten()[0].item(), str(tensor.dtype)) for tensor in tensors]


def scenario_all_reduce_params(ctx):
    outcomes = {}
    for name, kwargs in {
        "coalesced": {},
        "buckets_1mb": {"bucket_size_mb": 1},
        "per_tensor": {"coalesce": False},
        "mean": {"op": "mean"},
    }.items():
        params = _parameters(ctx["rank"])
        with counting("all_reduce") as calls:
            dist.all_reduce_params(params, **kwargs)
        outcomes[name] = (len(calls), _summary(params))
    module = torch.nn.Linear(3, 2)
    torch.nn.init.constant_(module.weight, ctx["rank"] + 1.0)
    torch.nn.init.constant_(module.bias, -1.0)
    dist.all_reduce_params(module.parameters(), op="max")  # a generator of parameters
    outcomes["module"] = (module.weight.flatten().tolist(), module.bias.tolist())
    return outcomes


def _dataset_share(rank, world_size, length, pad):
    """The indices a DistributedSampler deals this rank (padding repeats the first ones)."""
    indices = list(range(length))
    if pad:
        total = -(-length // world_size) * world_size
        indices += indices[: total - length]
    return [f"sample{index}" for index in indices[rank::world_size]]


def scenario_collect_results(ctx):
    rank, world_size = ctx["rank"], ctx["world_size"]
    shared = os.path.join(ctx["out_dir"], "collect_tmpdir")
    collected = {}
    for pad in (True, False):
        part = _dataset_share(rank, world_size, 7, pad)
        collected[f"cpu_pad{pad}"] = dist.collect_results(part, 7)
        collected[f"files_pad{pad}"] = dist.collect_results(part, 7, tmpdir=shared)
        collected[f"gpu_pad{pad}"] = dist.collect_results(part, 7, device="gpu")
        collected[f"cpu_direct_pad{pad}"] = dist.collect_results_cpu(part, 7)
        collected[f"gpu_direct_pad{pad}"] = dist.collect_results_gpu(part, 7)
    collected["files_left"] = sorted(os.listdir(shared)) if rank == 0 else None
    return collected


def scenario_collect_results_size_too_large(ctx):
    part = _dataset_share(ctx["rank"], ctx["world_size"], 7, pad=True)
    shared = os.path.join(ctx["out_dir"], "collect_tmpdir_error")
    return {
        "cpu": error_of(dist.collect_results, part, 100),
        "files": error_of(dist.collect_results, part, 100, tmpdir=shared),
        "gpu": error_of(dist.collect_results, part, 100, device="gpu"),
    }


def scenario_local_group(ctx):
    world_size = ctx["world_size"]
    before = {
        "local_rank": dist.get_local_rank(),  # from LOCAL_RANK
        "local_size": dist.get_local_size(),  # from LOCAL_WORLD_SIZE
        "get_local_group": error_of(dist.get_local_group),
        "too_many_ranks": error_of(dist.init_local_group, 1, world_size),
    }
    dist.init_local_group(node_rank=0, num_gpus_per_node=world_size)
    group = dist.get_local_group()
    after = {
        "local_rank": dist.get_local_rank(),
        "local_size": dist.get_local_size(),
        "group_size": dist.get_world_size(group),
        "again": error_of(dist.init_local_group, 0, world_size),
    }
    return before, after


def scenario_subgroup(ctx):
    members = [0, 1]
    group = torch.distributed.new_group(members)  # every rank takes part in creating it
    if ctx["rank"] not in members:
        return None
    data = torch.tensor([ctx["rank"] + 1.0])
    dist.all_reduce(data, group=group)
    gathered = dist.all_gather(torch.tensor([ctx["rank"]]), group=group)
    return {
        "world_size": dist.get_world_size(group),
        "rank": dist.get_rank(group),
        "sum": data.item(),
        "gathered": [tensor.item() for tensor in gathered],
        "seed_synced": len(set(dist.all_gather_object(dist.sync_random_seed(group), group))),
    }


def scenario_master_only(ctx):
    calls = []

    @dist.master_only
    def record(value):
        calls.append(value)
        return value * 2

    return record(21), calls, record.__name__


def scenario_init_dist_again(ctx):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist.init_dist("pytorch", backend="gloo")
    same = [str(warning.message) for warning in caught]
    other = error_of(dist.init_dist, "pytorch", backend="mpi")
    return same, other, dist.get_backend()
