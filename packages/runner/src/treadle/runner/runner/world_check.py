"""Every process of a run trains the same config: checked once, when the group starts.

On several machines each one reads its own copy of the config file and its own command line;
a copy that differs (another learning rate, a forgotten ``--cfg-options``) would train a model
that is not the one the checkpoints claim, or hang in the first collective whose shapes differ.
So the ranks gather their config fingerprints (:mod:`.config_fingerprint`, one small
all-gather at start, nothing per step), and when they differ gather the configs' leaves and
raise a LaunchError (a mistake in how the run was launched, which the ``treadle`` command
shows in a few lines) on every rank, before anything is built or trained, naming the differing
keys with each side's value and the machine (torchrun's ``GROUP_RANK``, the host name) of the ranks.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from treadle.dist import all_gather_object, get_world_size
from treadle.runner.utils.launch_error import LaunchError

from .config_fingerprint import config_fingerprint, config_items

_SHOWN_KEYS = 8  # a whole different config file would otherwise fill the screen


def _where(rank: int, place: dict[str, str]) -> str:
    node = f"node {place['node']}, " if place.get("node") is not None else ""
    return f"rank {rank} ({node}host {place['host']})"


def _differences(configs: list[dict[str, str]]) -> dict[str, dict[int, str]]:
    """{key: {rank: value or '<missing>'}} for every key whose value is not that of rank 0."""
    keys = sorted(set().union(*configs))
    found: dict[str, dict[int, str]] = {}
    for key in keys:
        values = [config.get(key, "<missing>") for config in configs]
        if any(value != values[0] for value in values):
            found[key] = dict(enumerate(values))
    return found


def _message(differences: dict[str, dict[int, str]], places: list[dict[str, str]]) -> str:
    lines = []
    for key, values in list(differences.items())[:_SHOWN_KEYS]:
        sides = ", ".join(f"{_where(rank, places[rank])}: {v}" for rank, v in values.items())
        lines.append(f"  {key}: {sides}")
    more = len(differences) - _SHOWN_KEYS
    if more > 0:
        lines.append(f"  ... and {more} more key(s)")
    return (
        f"the processes of this run do not have the same config; {len(differences)} key(s) "
        f"differ:\n" + "\n".join(lines) + "\nEvery machine must run the same config file with "
        "the same --cfg-options (work_dir, resume, load_from, launcher and experiment_name "
        "may differ)"
    )


def check_same_config(cfg: Any) -> None:
    """Raise LaunchError on every rank when the ranks' configs differ (a collective: every rank
    calls it once, after the process group starts; nothing with one process).

    Example:
        >>> check_same_config(runner.cfg)  # node 1: --cfg-options optim_wrapper.optimizer.lr=0.1
        LaunchError: the processes of this run do not have the same config; 1 key(s) differ:
          optim_wrapper.optimizer.lr: rank 0 (node 0, host a): 0.003, rank 1 (node 1, host b): 0.1
    """
    if get_world_size() == 1:
        return
    fingerprints = all_gather_object(config_fingerprint(cfg))
    if all(fingerprint == fingerprints[0] for fingerprint in fingerprints):
        return
    place = {"node": os.environ.get("GROUP_RANK"), "host": socket.gethostname()}
    gathered = all_gather_object((config_items(cfg), place))
    differences = _differences([items for items, _ in gathered])
    raise LaunchError(_message(differences, [where for _, where in gathered]))
