"""Devices: where a backend communicates, where data lives, and moving data between the two.

Collectives move their tensors to the communication device of the group's backend (the CPU for
gloo and MPI, the current GPU for NCCL) and the results back to where the caller's tensors were,
so callers never think about it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

import torch
from torch.distributed import ProcessGroup

from .info import get_backend


def _accelerator_device(kind: str, module_name: str, install_hint: str) -> torch.device:
    # Vendor extensions (torch_npu, torch_mlu, torch_musa) register their device module on import.
    try:
        importlib.import_module(module_name)
    except ImportError as error:
        raise ImportError(
            f"the process group's backend communicates on {kind} devices, which needs "
            f"{module_name} ({install_hint})"
        ) from error
    return torch.device(kind, getattr(torch, kind).current_device())


def get_comm_device(group: ProcessGroup | None = None) -> torch.device:
    """Return the device the backend of ``group`` communicates on.

    nccl and smddp: the current CUDA device; hccl: the current NPU; cncl: the current MLU;
    mccl: the current MUSA device; xccl: the current XPU; gloo, mpi, ucc and no backend (not
    distributed): the CPU. A combined backend such as ``'cpu:gloo,cuda:nccl'`` uses the GPU.

    Example:
        >>> get_comm_device()  # not distributed, or gloo
        device(type='cpu')
    """
    backend = (get_backend(group) or "").lower()
    if "nccl" in backend or backend == "smddp":
        return torch.device("cuda", torch.cuda.current_device())
    if backend == "hccl":
        return _accelerator_device("npu", "torch_npu", "Ascend's PyTorch adapter")
    if backend == "cncl":
        return _accelerator_device("mlu", "torch_mlu", "Cambricon's PyTorch adapter")
    if backend == "mccl":
        return _accelerator_device("musa", "torch_musa", "Moore Threads' PyTorch adapter")
    if backend == "xccl":
        return torch.device("xpu", torch.xpu.current_device())
    return torch.device("cpu")


def _is_numpy_array(data: Any) -> bool:
    # numpy is not a dependency: recognise its arrays by type, never by importing it.
    return type(data).__module__ == "numpy" and type(data).__name__ == "ndarray"


def _is_sequence(data: Any) -> bool:
    return (
        isinstance(data, Iterable)
        and not isinstance(data, (str, bytes, Mapping))
        and not _is_numpy_array(data)
    )


def _same_device(devices: Iterable[torch.device]) -> torch.device:
    found: torch.device | None = None
    for device in devices:
        if found is None:
            found = device
        elif device != found:
            raise ValueError(f"all tensors must be on one device, found {found} and {device}")
    if found is None:
        raise ValueError("data is empty: there is no tensor to find the device of")
    return found


def get_data_device(data: torch.Tensor | Mapping | Iterable) -> torch.device:
    """Return the device of a tensor, or of the tensors of a (nested) sequence or mapping.

    Raises ValueError when the tensors are on different devices or there is none, TypeError
    for anything else.

    Example:
        >>> get_data_device({"loss": torch.tensor(1.0), "acc": [torch.tensor(0.5)]})
        device(type='cpu')
    """
    if isinstance(data, torch.Tensor):
        return data.device
    if isinstance(data, Mapping):
        return _same_device(get_data_device(value) for value in data.values())
    if _is_sequence(data):
        return _same_device(get_data_device(item) for item in data)
    raise TypeError(
        f"get_data_device: data should be a Tensor, sequence of tensor or dict (of tensors, "
        f"nested as deep as wanted), got {type(data).__name__}"
    )


def _rebuild(template: Any, items: list[Any]) -> Any:
    if isinstance(template, tuple) and hasattr(template, "_fields"):  # a namedtuple
        return type(template)(*items)
    return type(template)(items)


def cast_data_device(
    data: torch.Tensor | Mapping | Iterable,
    device: torch.device,
    out: torch.Tensor | Mapping | Iterable | None = None,
) -> torch.Tensor | Mapping | Iterable:
    """Return ``data`` with every tensor on ``device`` (tensors already there are not copied).

    Sequences and mappings are rebuilt with their own type. With ``out`` (same structure as
    ``data``), each tensor of ``out`` also receives the values, in place.

    Example:
        >>> batch = {"img": torch.ones(2, 3), "ids": [torch.tensor([1]), torch.tensor([2])]}
        >>> cast_data_device(batch, torch.device("cpu"))["ids"][0]
        tensor([1])
    """
    if out is not None:
        if type(data) is not type(out):
            raise TypeError(
                f"out must have the type of data: data is {type(data).__name__}, out is "
                f"{type(out).__name__}"
            )
        if isinstance(out, (set, frozenset)):
            raise TypeError("out must not be a set: its items have no order to match data's")

    if isinstance(data, torch.Tensor):
        moved = data if data.device == device else data.to(device)
        if out is not None:
            out.copy_(moved)  # type: ignore[union-attr]
        return moved

    if isinstance(data, Mapping):
        if not data:
            raise ValueError("data is empty: there is no tensor to cast")
        if out is not None and len(out) != len(data):  # type: ignore[arg-type]
            raise ValueError(f"data and out differ in length: {len(data)} and {len(out)}")  # type: ignore[arg-type]
        moved_items = {
            key: cast_data_device(value, device, None if out is None else out[key])  # type: ignore[index]
            for key, value in data.items()
        }
        return type(data)(moved_items)  # type: ignore[call-arg]

    if _is_sequence(data):
        items = list(data)
        if not items:
            raise ValueError("data is empty: there is no tensor to cast")
        if out is None:
            moved_list = [cast_data_device(item, device) for item in items]
        else:
            out_items = list(out)
            if len(out_items) != len(items):
                raise ValueError(
                    f"data and out differ in length: {len(items)} and {len(out_items)}"
                )
            moved_list = [
                cast_data_device(item, device, target)
                for item, target in zip(items, out_items, strict=True)
            ]
        return _rebuild(data, moved_list)

    raise TypeError(
        f"get_data_device: data should be a Tensor, sequence of tensor or dict (of tensors, "
        f"nested as deep as wanted), got {type(data).__name__}"
    )
