"""Every random generator of the process, captured and restored as plain tensors and ints.

A checkpoint is loaded with ``weights_only=True``, so the captured state holds only tensors,
ints, floats, strings, lists and dicts: Python's state tuple and NumPy's array become int64
tensors. The accelerator's generators (one per device of the type the run uses) are captured
when that type is initialized; a state captured on another device type is not applied.
"""

from __future__ import annotations

import logging
import random
from typing import Any

import numpy as np
import torch

from treadle.logging import print_log
from treadle.runner.device import get_device


def _device_module(device_type: str) -> Any:
    if device_type == "cpu":
        return None
    module = getattr(torch, device_type, None)
    if module is None or not hasattr(module, "get_rng_state"):
        return None
    return module


def capture_rng_state() -> dict[str, Any]:
    """The states of Python's ``random``, NumPy's global generator, torch's CPU generator and
    the generators of each accelerator device, in a form ``weights_only`` loading accepts.

    Example:
        >>> state = capture_rng_state()
        >>> a = torch.rand(2)
        >>> restore_rng_state(state)
        >>> torch.equal(a, torch.rand(2))
        True
    """
    version, internal, gauss_next = random.getstate()
    np_name, np_keys, np_pos, np_has_gauss, np_gauss = np.random.get_state(legacy=True)
    state: dict[str, Any] = {
        "python": {
            "version": version,
            "state": torch.tensor(internal, dtype=torch.int64),
            "gauss_next": gauss_next,
        },
        "numpy": {
            "name": np_name,
            "keys": torch.from_numpy(np_keys.astype(np.int64)),
            "pos": int(np_pos),
            "has_gauss": int(np_has_gauss),
            "cached_gaussian": float(np_gauss),
        },
        "torch": torch.get_rng_state(),
    }
    device_type = get_device()
    module = _device_module(device_type)
    if module is not None and getattr(module, "is_initialized", lambda: True)():
        if hasattr(module, "get_rng_state_all"):
            states = list(module.get_rng_state_all())
        else:
            states = [module.get_rng_state()]
        state["device"] = {"type": device_type, "states": states}
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Put every generator back to ``state`` (from :func:`capture_rng_state`: host tensors; a
    loop's ``load_state_dict`` brings a checkpoint's back from the device first)."""
    python = state["python"]
    random.setstate(
        (python["version"], tuple(int(x) for x in python["state"].tolist()), python["gauss_next"])
    )
    numpy_state = state["numpy"]
    np.random.set_state(
        (
            numpy_state["name"],
            numpy_state["keys"].numpy().astype(np.uint32),
            numpy_state["pos"],
            numpy_state["has_gauss"],
            numpy_state["cached_gaussian"],
        )
    )
    torch.set_rng_state(state["torch"])
    saved = state.get("device")
    if saved is None:
        return
    device_type = get_device()
    module = _device_module(device_type)
    if saved["type"] != device_type or module is None:
        print_log(
            f"the checkpoint holds the random state of {saved['type']} devices, but this run "
            f"uses {device_type}: their generators start from the seed, so random draws on "
            f"the device differ from the interrupted run",
            logger="current",
            level=logging.WARNING,
        )
        return
    states = saved["states"]
    if hasattr(module, "set_rng_state_all"):
        count = module.device_count() if hasattr(module, "device_count") else len(states)
        if count != len(states):
            print_log(
                f"the checkpoint holds the random state of {len(states)} {device_type} "
                f"device(s), this machine has {count}: restoring the first "
                f"{min(count, len(states))}",
                logger="current",
                level=logging.WARNING,
            )
        for index, device_state in enumerate(states[:count]):
            module.set_rng_state(device_state, index)
    else:
        module.set_rng_state(states[0])
