"""What init_dist made of a launcher's environment, reported by each rank (see
tests/support/gloo_rank_runner.py)."""

import os

import torch

import treadle.dist as dist

TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def scenario_launched(ctx):
    total = torch.tensor([ctx["rank"] + 1])
    dist.all_reduce(total)
    return {
        "dist_info": dist.get_dist_info(),
        "variables": {name: os.environ.get(name) for name in TORCHRUN_VARIABLES},
        "master": (os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")),
        "local": (dist.get_local_rank(), dist.get_local_size()),
        "infer_launcher": dist.infer_launcher(),
        "backend": dist.get_backend(),
        "sum": total.item(),
    }
