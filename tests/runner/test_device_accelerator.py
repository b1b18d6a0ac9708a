"""treadle.runner.device's device-neutral helpers (current_device, device_count, set_device,
get_max_memory, dist_backend_for, is_xpu_available): their answers on this machine, and on a
simulated accelerator (a stand-in for ``torch.accelerator`` reporting an XPU or a CUDA GPU), so
that the paths of machines with accelerators run here too."""

from __future__ import annotations

import types

import pytest
import torch

from treadle.runner import device
from treadle.runner.runner.env import collect_env

HAS_ACCELERATOR = torch.accelerator.current_accelerator(check_available=True) is not None
needs_no_accelerator = pytest.mark.skipif(
    HAS_ACCELERATOR, reason="checks the answers of a machine without accelerators"
)


@pytest.mark.parametrize(
    ("device_type", "backend"),
    [
        ("cuda", "nccl"),
        ("npu", "hccl"),
        ("mlu", "cncl"),
        ("musa", "mccl"),
        ("xpu", "xccl"),
        ("cpu", "gloo"),
        ("mps", "gloo"),
    ],
)
def test_dist_backend_for_each_device_type(device_type, backend):
    assert device.dist_backend_for(device_type) == backend


@needs_no_accelerator
def test_answers_of_a_machine_without_accelerators():
    assert device.get_device() == "cpu"
    assert device.current_device() == torch.device("cpu")
    assert device.device_count() == 0
    assert device.device_count("cpu") == 0
    assert device.device_count("cuda") == 0
    assert device.dist_backend_for() == "gloo"
    assert device.get_max_memory() is None
    assert device.is_xpu_available() is False
    device.set_device(0)  # nothing to select on the CPU


def test_xpu_availability_matches_torch():
    assert device.is_xpu_available() == torch.xpu.is_available()


class FakeAccelerator:
    """What torch.accelerator answers on a machine with ``count`` devices of ``device_type``."""

    def __init__(self, device_type: str, count: int = 2, index: int = 1) -> None:
        self.type, self.count, self.index = device_type, count, index
        self.selected: list[int] = []
        self.peak_reset = 0

    def current_accelerator(self, check_available: bool = False) -> torch.device:
        return torch.device(self.type)

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return self.count

    def current_device_index(self) -> int:
        return self.index

    def set_device_index(self, index: int) -> None:
        self.selected.append(index)

    def max_memory_allocated(self, device: object = None) -> int:
        return 3 * 1024 * 1024

    def reset_peak_memory_stats(self, device: object = None) -> None:
        self.peak_reset += 1

    def empty_cache(self) -> None:
        pass


@pytest.fixture
def fake_xpu(monkeypatch):
    fake = FakeAccelerator("xpu")
    monkeypatch.setattr(torch, "accelerator", fake)
    return fake


@needs_no_accelerator
def test_a_simulated_xpu_is_found_through_torch_accelerator(fake_xpu):
    assert device.is_xpu_available() is True
    assert device.is_cuda_available() is False
    assert device.get_device() == "xpu"
    assert device.current_device() == torch.device("xpu", 1)
    assert device.device_count() == 2
    assert device.device_count("cuda") == 0
    assert device.dist_backend_for() == "xccl"
    device.set_device(0)
    assert fake_xpu.selected == [0]
    assert device.get_max_memory() == 3
    assert fake_xpu.peak_reset == 1


@needs_no_accelerator
def test_a_simulated_cuda_gpu_is_found_through_torch_accelerator(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", FakeAccelerator("cuda", count=4, index=3))
    assert device.is_cuda_available() is True
    assert device.get_device() == "cuda"
    assert device.current_device() == torch.device("cuda", 3)
    assert device.device_count("cuda") == 4
    assert device.dist_backend_for() == "nccl"


@needs_no_accelerator
def test_collect_env_names_the_device_in_use(fake_xpu):
    info = collect_env()
    assert info["Device"] == "xpu"
    assert info["Devices"] == "2"
    assert info["CUDA available"] == "False"


@needs_no_accelerator
def test_a_torch_without_torch_accelerator_asks_the_backend_modules(monkeypatch):
    monkeypatch.delattr(torch, "accelerator")
    assert device.get_device() == "cpu"
    assert device.current_device() == torch.device("cpu")
    assert device.device_count("cuda") == 0
    assert device.get_max_memory() is None
    fake_cuda = types.SimpleNamespace(
        is_available=lambda: True, device_count=lambda: 2, current_device=lambda: 1
    )
    monkeypatch.setattr(torch, "cuda", fake_cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert device.get_device() == "cuda"
    assert device.device_count() == 2
    assert device.current_device() == torch.device("cuda", 1)


def test_collect_env_on_this_machine():
    info = collect_env()
    assert info["Device"] == device.get_device()
    assert info["CUDA available"] == str(device.get_device() == "cuda")
