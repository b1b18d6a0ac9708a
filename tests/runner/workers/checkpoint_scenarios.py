"""Scenarios of tests/runner/test_checkpoint_distributed.py, run on every rank of a gloo group.

CHECKPOINT_URL (set by the test) serves a checkpoint from the test process; out_dir is shared
by the ranks, as a work directory on a shared disk would be.
"""

import os

import torch
from torch import nn

import treadle.dist as dist
from treadle.runner.checkpoint import (
    find_latest_checkpoint,
    get_state_dict,
    load_checkpoint,
    load_from_http,
    load_state_dict,
    save_checkpoint,
)
from treadle.runner.model import MMDistributedDataParallel


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Linear(3, 4)
        self.head = nn.Linear(4, 2)


class Holder(nn.Module):
    """A plain module around a DDP-wrapped one."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = MMDistributedDataParallel(module=net)


def scenario_http_download_once_per_machine(context):
    checkpoint = load_from_http(
        os.environ["CHECKPOINT_URL"], model_dir=os.path.join(context["out_dir"], "cache")
    )
    return checkpoint["w"].tolist()


def scenario_save_wrapped_on_rank_0_and_load_everywhere(context):
    torch.manual_seed(10)
    source = MMDistributedDataParallel(module=Net())
    path = os.path.join(context["out_dir"], "work", "epoch_1.pth")
    names = list(get_state_dict(source))
    if context["rank"] == 0:
        save_checkpoint({"state_dict": get_state_dict(source), "meta": {"epoch": 1}}, path)
    dist.barrier()
    torch.manual_seed(20 + context["rank"])
    target = Holder(Net())
    # the checkpoint has no 'net.' prefix: revise it in, as a user loading into a bigger model
    load_checkpoint(target, path, strict=True, revise_keys=[(r"^", "net.")])
    loaded = get_state_dict(target)
    same = all(torch.equal(loaded[f"net.{k}"], v) for k, v in get_state_dict(source).items())
    return {"names": names, "same": same, "latest": find_latest_checkpoint(os.path.dirname(path))}


def scenario_strict_mismatch_raises_on_every_rank(context):
    state = Net().state_dict()
    del state["head.bias"]
    try:
        load_state_dict(Net(), state, strict=True)
    except RuntimeError as err:
        return str(err)
    return None
