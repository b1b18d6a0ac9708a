"""treadle.runner.device on this machine: what it reports, and resolve_device's answers and
errors. CUDA-only paths run where a GPU is present and are skipped, with the reason, elsewhere."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
import torch

from treadle.runner import device

HAS_CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
needs_no_cuda = pytest.mark.skipif(HAS_CUDA, reason="checks the answers of a machine without GPUs")


def test_availability_matches_torch():
    assert device.is_cuda_available() == torch.cuda.is_available()
    assert device.is_mps_available() == torch.backends.mps.is_available()


@pytest.mark.parametrize(
    ("check", "adapter"),
    [
        (device.is_npu_available, "torch_npu"),
        (device.is_mlu_available, "torch_mlu"),
        (device.is_musa_available, "torch_musa"),
        (device.is_dipu_available, "torch_dipu"),
    ],
)
def test_vendor_devices_are_absent_without_their_adapter(check, adapter):
    if importlib.util.find_spec(adapter) is not None:
        pytest.skip(f"{adapter} is installed here")
    assert check() is False
    assert adapter not in sys.modules


def test_full_precision_npu_needs_an_npu():
    if importlib.util.find_spec("torch_npu") is not None:
        pytest.skip("torch_npu is installed here")
    assert device.is_npu_support_full_precision() is False


@needs_no_cuda
def test_get_device_is_cpu_without_accelerators():
    if torch.backends.mps.is_available():
        pytest.skip("an MPS device is present")
    assert device.get_device() == "cpu"


@needs_cuda
def test_get_device_prefers_cuda_on_a_gpu_machine():
    assert device.get_device() == "cuda"


def test_resolve_device_default_is_get_device():
    assert device.resolve_device() == torch.device(device.get_device())


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("cpu", torch.device("cpu")),
        (" cpu ", torch.device("cpu")),
        ("cpu:0", torch.device("cpu", 0)),
        ("meta", torch.device("meta")),
        (torch.device("cpu"), torch.device("cpu")),
    ],
)
def test_resolve_device_of_cpu_and_meta(written, expected):
    assert device.resolve_device(written) == expected


@pytest.mark.parametrize(
    ("written", "message"),
    [
        (
            "cdua",
            r"unknown device 'cdua': the type 'cdua' is not one of cpu, cuda.*did you mean 'cuda'",
        ),
        ("gpu", r"unknown device 'gpu': the type 'gpu' is not one of cpu, cuda, mps"),
        ("npu0", r"unknown device 'npu0'.*did you mean 'npu'"),
        ("cuda:x", r"device 'cuda:x': the index after ':' must be a whole number >= 0, got 'x'"),
        ("cuda:-1", r"device 'cuda:-1': the index after ':' must be a whole number"),
    ],
)
def test_resolve_device_refuses_what_is_not_a_device(written, message):
    with pytest.raises(ValueError, match=message):
        device.resolve_device(written)


def test_resolve_device_refuses_other_kinds_of_value():
    with pytest.raises(TypeError, match=r"device must be a str such as 'cuda:0'.*got int: 1"):
        device.resolve_device(1)


@needs_no_cuda
@pytest.mark.parametrize("written", ["cuda", "cuda:0", torch.device("cuda", 1)])
def test_resolve_device_says_cuda_is_missing(written):
    with pytest.raises(RuntimeError, match=r"device 'cuda(:\d)?': this machine has no usable cuda"):
        device.resolve_device(written)


@pytest.mark.parametrize("device_type", ["npu", "mlu", "musa"])
def test_resolve_device_says_a_vendor_device_is_missing(device_type):
    if importlib.util.find_spec(f"torch_{device_type}"):
        pytest.skip(f"torch_{device_type} is installed here")
    with pytest.raises(
        RuntimeError, match=rf"device '{device_type}:0': this machine has no usable"
    ):
        device.resolve_device(f"{device_type}:0")


@needs_cuda
def test_resolve_device_of_each_gpu_and_one_too_many():
    count = torch.cuda.device_count()
    assert device.resolve_device("cuda") == torch.device("cuda")
    assert device.resolve_device(f"cuda:{count - 1}") == torch.device("cuda", count - 1)
    with pytest.raises(
        ValueError, match=rf"index {count} is out of range, this machine has {count}"
    ):
        device.resolve_device(f"cuda:{count}")


@needs_no_cuda
def test_max_cuda_memory_without_cuda_says_so():
    with pytest.raises(RuntimeError, match="get_max_cuda_memory: CUDA is not available"):
        device.get_max_cuda_memory()


def test_max_musa_memory_without_musa_says_so():
    if importlib.util.find_spec("torch_musa") is not None:
        pytest.skip("torch_musa is installed here")
    with pytest.raises(RuntimeError, match="get_max_musa_memory: MUSA is not available"):
        device.get_max_musa_memory()


@needs_cuda
def test_max_cuda_memory_reports_the_peak_then_starts_again():
    torch.cuda.reset_peak_memory_stats()
    block = torch.empty(64 * 1024 * 1024, dtype=torch.uint8, device="cuda")  # 64 MiB
    del block
    assert device.get_max_cuda_memory() >= 64
    assert device.get_max_cuda_memory() < 64  # the peak was reset by the previous call


@needs_cuda
def test_max_memory_of_the_log_line_is_torchs_peak():
    torch.cuda.reset_peak_memory_stats()
    block = torch.empty(96 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    expected = torch.cuda.max_memory_allocated() // (1024 * 1024)
    assert expected >= 96
    del block
    assert device.get_max_memory() == expected  # the peak outlives the block
    assert device.get_max_memory() < 96  # counting again from the previous call


def test_importing_device_leaves_vendor_adapters_alone():
    code = (
        "import sys, treadle.runner.device as d; d.get_device(); "
        "print(sorted(m for m in ('torch_npu', 'torch_mlu', 'torch_musa', 'torch_dipu') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    found = [
        name
        for name in ("torch_npu", "torch_mlu", "torch_musa", "torch_dipu")
        if importlib.util.find_spec(name)
    ]
    assert out.stdout.strip() == repr(sorted(found))
