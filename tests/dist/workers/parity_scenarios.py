"""Scenarios of test_mmengine_parity.py, run by every rank of a real gloo group (see
tests/support/gloo_rank_runner.py) in the environment that has MMEngine: each calls the same
function of ``mmengine.dist`` and of ``treadle.dist`` on identical inputs and returns both outcomes,
``{"mmengine": ..., "treadle": ...}`` (see parity_common.py), for the test to compare.

Each case builds its inputs itself from the rank, so both libraries see the same ones.
"""

import os

import torch
import torch.distributed
from parity_common import both

# --- who am I ---------------------------------------------------------------------------------


def scenario_info(ctx):
    def case(dist):
        return {
            "dist_info": dist.get_dist_info(),
            "rank": dist.get_rank(),
            "world_size": dist.get_world_size(),
            "is_main_process": dist.is_main_process(),
            "is_distributed": dist.is_distributed(),
            "backend": dist.get_backend(),
            "default_group_is_world": dist.get_default_group() is torch.distributed.group.WORLD,
            "comm_device": dist.get_comm_device(),
            "infer_launcher": dist.infer_launcher(),
        }

    return both(case)


def scenario_info_of_a_group(ctx):
    group = torch.distributed.new_group([0, 1])  # every rank takes part in creating it

    def case(dist):
        if ctx["rank"] > 1:
            return None
        return dist.get_dist_info(group), dist.is_main_process(group), dist.get_backend(group)

    return both(case)


def scenario_local_rank_before_init_local_group(ctx):
    return {
        "rank": both(lambda dist: dist.get_local_rank()),
        "size": both(lambda dist: dist.get_local_size()),
        "group": both(lambda dist: dist.get_local_group()),
    }


def scenario_local_group(ctx):
    def case(dist):
        dist.init_local_group(0, ctx["world_size"])  # each library keeps its own group
        group = dist.get_local_group()
        return dist.get_local_rank(), dist.get_local_size(), dist.get_world_size(group)

    return both(case)


def scenario_master_only(ctx):
    def case(dist):
        calls = []

        @dist.master_only
        def record(value):
            """Records."""
            calls.append(value)
            return value * 2

        return record(21), calls, record.__name__, record.__doc__

    return both(case)


# --- all_reduce -------------------------------------------------------------------------------


def _reduced(dist, data, op):
    returned = dist.all_reduce(data, op=op)
    return returned, data


def scenario_all_reduce_float_ops(ctx):
    rank = ctx["rank"]
    ops = ("sum", "mean", "product", "min", "max", "SUM", "Mean")
    return {
        op: both(lambda dist, op=op: _reduced(dist, torch.tensor([rank + 1.0, -2.5 * rank]), op))
        for op in ops
    }


def scenario_all_reduce_dtypes_and_shapes(ctx):
    rank = ctx["rank"]
    inputs = {
        "float64_matrix": lambda: torch.arange(6, dtype=torch.float64).reshape(2, 3) * (rank + 1),
        "int32": lambda: torch.tensor([rank, 5], dtype=torch.int32),
        "scalar": lambda: torch.tensor(rank + 0.5),
        "float16": lambda: torch.tensor([rank + 1.0], dtype=torch.float16),
        "empty": lambda: torch.zeros(0),
    }
    return {
        f"{name}_{op}": both(lambda dist, make=make, op=op: _reduced(dist, make(), op))
        for name, make in inputs.items()
        for op in ("sum", "mean", "max")
    }


def scenario_all_reduce_integer_mean(ctx):
    # The mean of integers stays an integer tensor; negative quotients round toward zero.
    rank = ctx["rank"]
    return {
        "int64": both(lambda dist: _reduced(dist, torch.tensor([rank + 1, -3 * rank - 2]), "mean")),
        "int32": both(
            lambda dist: _reduced(dist, torch.tensor([7 * rank], dtype=torch.int32), "mean")
        ),
    }


def scenario_all_reduce_bitwise_ops(ctx):
    rank = ctx["rank"]
    return {
        op: both(lambda dist, op=op: _reduced(dist, torch.tensor([1 << rank, 7, rank]), op))
        for op in ("band", "bor", "bxor")
    }


def scenario_all_reduce_unsupported_op(ctx):
    return both(lambda dist: dist.all_reduce(torch.ones(1), op="avg"))


def scenario_all_reduce_keeps_the_tensor_object(ctx):
    def case(dist):
        data = torch.tensor([ctx["rank"] + 1.0])
        storage = data.data_ptr()
        dist.all_reduce(data, op="mean")
        return data.data_ptr() == storage

    return both(case)


def scenario_all_reduce_non_contiguous(ctx):
    def case(dist):
        matrix = (torch.arange(6.0).reshape(2, 3) * (ctx["rank"] + 1)).t()
        dist.all_reduce(matrix)
        return matrix

    return both(case)


# --- gather and broadcast ---------------------------------------------------------------------


def scenario_all_gather(ctx):
    rank = ctx["rank"]
    inputs = {
        "vector": lambda: torch.tensor([rank, 10 * rank]),
        "matrix_float64": lambda: torch.full((2, 2), rank + 0.5, dtype=torch.float64),
        "scalar": lambda: torch.tensor(rank * 1.5),
    }

    def case(dist, make):
        data = make()
        gathered = dist.all_gather(data)
        return gathered, any(tensor is data for tensor in gathered), data

    return {name: both(case, make) for name, make in inputs.items()}


def scenario_all_gather_object(ctx):
    rank = ctx["rank"]
    return {
        "dict": both(lambda dist: dist.all_gather_object({"rank": rank, "text": "x" * rank})),
        "tensor": both(lambda dist: dist.all_gather_object(torch.tensor([rank]))),
        "none": both(lambda dist: dist.all_gather_object(None)),
    }


def scenario_gather(ctx):
    rank, last = ctx["rank"], ctx["world_size"] - 1
    return {
        "dst0": both(lambda dist: dist.gather(torch.tensor([rank * 2.0]))),
        "dst_last": both(lambda dist: dist.gather(torch.tensor([[rank, 1]]), dst=last)),
    }


def scenario_gather_object(ctx):
    rank, last = ctx["rank"], ctx["world_size"] - 1
    return {
        "dst0": both(lambda dist: dist.gather_object(("from", rank))),
        "dst_last": both(lambda dist: dist.gather_object({"rank": rank}, dst=last)),
    }


def scenario_broadcast(ctx):
    rank, last = ctx["rank"], ctx["world_size"] - 1

    def case(dist, make, **kwargs):
        data = make()
        returned = dist.broadcast(data, **kwargs)
        return returned, data

    return {
        "src0": both(case, lambda: torch.tensor([rank + 7, rank])),
        "src_last": both(case, lambda: torch.full((2, 2), float(rank)), src=last),
        "non_contiguous": both(case, lambda: (torch.arange(6.0).reshape(2, 3) + rank).t()),
        "scalar": both(case, lambda: torch.tensor(rank * 1.5, dtype=torch.float64)),
    }


def scenario_broadcast_object_list(ctx):
    rank, last = ctx["rank"], ctx["world_size"] - 1

    def case(dist, **kwargs):
        objects = [f"rank {rank}", {"n": rank}, None]
        returned = dist.broadcast_object_list(objects, **kwargs)
        return returned, objects

    return {"src0": both(case), "src_last": both(case, src=last)}


def scenario_sync_random_seed(ctx):
    def case(dist):
        seed = dist.sync_random_seed()
        everyone = [None] * ctx["world_size"]
        torch.distributed.all_gather_object(everyone, seed)
        return type(seed).__name__, 0 <= seed < 2**31, len(set(everyone))

    return both(case)


def scenario_barrier(ctx):
    return both(lambda dist: dist.barrier())


def scenario_collectives_on_a_group(ctx):
    group = torch.distributed.new_group([0, 1])
    rank = ctx["rank"]

    def case(dist):
        if rank > 1:
            return None
        data = torch.tensor([rank + 1.0])
        dist.all_reduce(data, op="mean", group=group)
        objects = [rank]
        dist.broadcast_object_list(objects, group=group)
        return (
            data,
            dist.all_gather(torch.tensor([rank]), group=group),
            dist.all_gather_object(rank, group=group),
            objects,
        )

    return both(case)


# --- reducing many tensors --------------------------------------------------------------------


def _metrics(rank):
    # Built in a rank-dependent order: keys are matched by name, not insertion order.
    items = [
        ("loss", torch.tensor([[rank + 0.5, 1.0], [2.0, rank * 2.0]])),
        ("acc", torch.tensor(rank / 4)),
        ("iou", torch.arange(3.0) * rank),
    ]
    return dict(reversed(items) if rank % 2 else items)


def scenario_all_reduce_dict(ctx):
    rank = ctx["rank"]

    def case(dist, op):
        data = _metrics(rank)
        originals = dict(data)
        returned = dist.all_reduce_dict(data, op=op)
        untouched = all(torch.equal(originals[key], _metrics(rank)[key]) for key in data)
        return returned, dict(sorted(data.items())), untouched

    return {op: both(case, op) for op in ("sum", "mean", "max")}


def scenario_all_reduce_dict_integers(ctx):
    rank = ctx["rank"]

    def case(dist, op):
        data = {"correct": torch.tensor([rank + 1, 3 * rank]), "total": torch.tensor(8)}
        dist.all_reduce_dict(data, op=op)
        return dict(sorted(data.items()))

    return {op: both(case, op) for op in ("sum", "mean")}


def scenario_all_reduce_dict_mixed_dtypes(ctx):
    rank = ctx["rank"]

    def case(dist):
        data = {"loss": torch.tensor(rank + 0.5), "correct": torch.tensor([rank + 1, 2])}
        dist.all_reduce_dict(data, op="sum")
        return dict(sorted(data.items()))

    return both(case)


def _parameters(rank):
    floats = [torch.full((5, 4), float(rank + i)) for i in range(3)]
    doubles = [torch.full((3,), rank + 0.25, dtype=torch.float64)]
    return [*floats, *doubles, torch.tensor([rank, 1, -rank - 1])]


def scenario_all_reduce_params(ctx):
    rank = ctx["rank"]

    def case(dist, **kwargs):
        params = _parameters(rank)
        returned = dist.all_reduce_params(params, **kwargs)
        return returned, params

    variants = {
        "coalesced": {},
        "per_tensor": {"coalesce": False},
        "small_buckets": {"bucket_size_mb": 1},
        "mean": {"op": "mean"},
        "max": {"op": "max", "coalesce": False},
    }
    return {name: both(case, **kwargs) for name, kwargs in variants.items()}


def scenario_all_reduce_params_of_a_module(ctx):
    def case(dist):
        torch.manual_seed(ctx["rank"])
        module = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
        dist.all_reduce_params(module.parameters(), op="mean")
        dist.all_reduce_params(module.buffers(), op="sum")
        return [value.detach() for value in module.state_dict().values()]

    return both(case)


# --- collecting results -----------------------------------------------------------------------


def _chdir(ctx, dist, name):
    # MMEngine's collect_results_cpu without tmpdir creates '.dist_test' in the working
    # directory: give each library a directory of its own, away from the repository.
    directory = os.path.join(ctx["out_dir"], name, dist.__name__)
    os.makedirs(directory, exist_ok=True)
    os.chdir(directory)
    return directory


def _dataset_share(rank, world_size, length, pad):
    """The samples a DistributedSampler deals this rank (padding repeats the first ones)."""
    indices = list(range(length))
    if pad:
        total = -(-length // world_size) * world_size
        indices += indices[: total - length]
    return [f"sample{index}" for index in indices[rank::world_size]]


def _collect_every_way(ctx, dist, name, part, size):
    directory = _chdir(ctx, dist, name)
    shared = os.path.join(directory, "shared_tmpdir")
    return {
        "cpu": dist.collect_results(part, size),
        "cpu_tmpdir": dist.collect_results(part, size, tmpdir=shared),
        "gpu": dist.collect_results(part, size, device="gpu"),
        "npu": dist.collect_results(part, size, device="npu"),
        "collect_results_cpu": dist.collect_results_cpu(part, size),
        "collect_results_gpu": dist.collect_results_gpu(part, size),
    }


def scenario_collect_results_padded(ctx):
    part = _dataset_share(ctx["rank"], ctx["world_size"], 7, pad=True)
    return both(lambda dist: _collect_every_way(ctx, dist, "padded", part, 7))


def scenario_collect_results_uneven(ctx):
    # No padding (drop_last=False without padding, or an evaluation sampler): the lower ranks
    # hold one more sample each.
    part = _dataset_share(ctx["rank"], ctx["world_size"], 7, pad=False)
    return both(lambda dist: _collect_every_way(ctx, dist, "uneven", part, 7))


def scenario_collect_results_smaller_size(ctx):
    part = _dataset_share(ctx["rank"], ctx["world_size"], 7, pad=True)
    return both(lambda dist: _collect_every_way(ctx, dist, "smaller", part, 3))


def scenario_collect_results_one_result_per_batch(ctx):
    # MMEngine's Accuracy example keeps one dict per batch while size is the dataset's length.
    # One way only: treadle raises on rank 0 after the gather, so the ranks stay in step.
    part = [{"batch_size": 32, "correct": 20 + ctx["rank"]}]
    return both(lambda dist: dist.collect_results(part, 1000))


def scenario_collect_results_with_none_results(ctx):
    part = [None, f"rank{ctx['rank']}"]
    return both(lambda dist: _collect_every_way(ctx, dist, "none", part, 2 * ctx["world_size"]))


def scenario_collect_results_tmpdir_left_behind(ctx):
    def case(dist):
        directory = _chdir(ctx, dist, "left_behind")
        shared = os.path.join(directory, "shared_tmpdir")
        dist.collect_results([ctx["rank"]], ctx["world_size"], tmpdir=shared)
        dist.barrier()
        return {
            "tmpdir_exists": os.path.isdir(shared),
            "tmpdir_files": sorted(os.listdir(shared)) if os.path.isdir(shared) else None,
            "working_directory": sorted(os.listdir(directory)),
        }

    tmpdir = both(case)

    def without_tmpdir(dist):
        directory = _chdir(ctx, dist, "no_tmpdir")
        dist.collect_results([ctx["rank"]], ctx["world_size"])
        dist.barrier()
        return sorted(os.listdir(directory))

    return {"tmpdir": tmpdir, "no_tmpdir": both(without_tmpdir)}
