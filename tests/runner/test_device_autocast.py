"""autocast: the device the run uses by default, bfloat16 on the CPU, float16 where asked, a
disabled region inside an enabled one, and errors where torch would only warn and do nothing."""

from __future__ import annotations

import importlib

import pytest
import torch

from treadle.runner.device import get_device, is_mps_available
from treadle.runner.device.autocast import (
    AutocastDeviceError,
    autocast,
    resolve_autocast_dtype,
)

needs_cpu_run = pytest.mark.skipif(get_device() != "cpu", reason="checks the CPU default")
needs_no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _known_to_torch(device_type: str) -> bool:
    try:
        torch.amp.is_autocast_available(device_type)
    except RuntimeError:
        return False
    return True


# The module (the package's attribute of that name is the function).
AUTOCAST_MODULE = importlib.import_module("treadle.runner.device.autocast")
KNOWN_TO_TORCH = {name for name in ("mlu", "npu", "musa") if _known_to_torch(name)}


def matmul_dtype() -> torch.dtype:
    return (torch.ones(2, 2) @ torch.ones(2, 2)).dtype


@needs_cpu_run
def test_default_is_the_run_device_in_bfloat16():
    with autocast():
        assert matmul_dtype() == torch.bfloat16
        assert torch.is_autocast_enabled("cpu")
    assert matmul_dtype() == torch.float32


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        ("float16", torch.float16),
        ("bfloat16", torch.bfloat16),
        ("torch.float16", torch.float16),
        (torch.float16, torch.float16),
        (None, torch.bfloat16),
    ],
)
def test_cpu_computes_in_the_dtype_asked(dtype, expected):
    with autocast(device_type="cpu", dtype=dtype):
        assert matmul_dtype() == expected


def test_device_index_is_ignored():
    with autocast(device_type="cpu:0"):
        assert matmul_dtype() == torch.bfloat16


def test_disabled_region_inside_an_enabled_one_runs_in_full_precision():
    with autocast(device_type="cpu"):
        with autocast(device_type="cpu", enabled=False):
            assert matmul_dtype() == torch.float32
        assert matmul_dtype() == torch.bfloat16


def test_usable_as_a_decorator():
    @autocast(device_type="cpu", dtype="float16")
    def compute():
        return matmul_dtype()

    assert compute() == torch.float16


def test_cache_enabled_is_passed_to_torch():
    context = autocast(device_type="cpu", cache_enabled=False)
    assert context._cache_enabled is False


def test_resolve_autocast_dtype():
    assert resolve_autocast_dtype(None) is None
    assert resolve_autocast_dtype("bfloat16") is torch.bfloat16
    assert resolve_autocast_dtype(torch.float16) is torch.float16


@pytest.mark.parametrize(
    ("dtype", "error", "match"),
    [
        (
            "flaot16",
            ValueError,
            r"autocast dtype 'flaot16' is not one of 'float16', 'bfloat16'; did you mean "
            r"'float16'",
        ),
        ("float32", ValueError, r"'float32' is not one of .*full precision needs no autocast"),
        (torch.float64, ValueError, r"float16 or torch.bfloat16, not torch.float64"),
        (16, TypeError, r"dtype must be a torch.dtype, one of float16, bfloat16 or None, got int"),
    ],
)
def test_bad_dtype(dtype, error, match):
    with pytest.raises(error, match=match):
        autocast(device_type="cpu", dtype=dtype)


def test_bad_device_type():
    with pytest.raises(TypeError, match=r"device_type must be a str .* got int: 0"):
        autocast(device_type=0)
    with pytest.raises(
        ValueError,
        match=r"User specified autocast device_type 'cpx' \(did you mean 'cpu'\?\): torch .* "
        r"has no autocast for it; it has for cpu, cuda",
    ):
        autocast(device_type="cpx")
    with pytest.raises(ValueError, match=r"'meta'.*has no autocast"):
        autocast(device_type="meta")


def test_device_without_autocast_may_run_disabled():
    with autocast(device_type="meta", enabled=False):
        assert matmul_dtype() == torch.float32


@needs_no_cuda
@pytest.mark.parametrize("dtype", [None, "float16", "bfloat16"])
def test_cuda_on_a_machine_without_it_warns_and_runs_in_full_precision(dtype):
    # As MMEngine, whose torch.autocast('cuda') warns and disables itself.
    with pytest.warns(
        UserWarning,
        match=r"autocast device_type 'cuda': CUDA is not available on this machine \(the run "
        r"uses 'cpu'\), so autocast is disabled and the region runs in full precision",
    ) as records:
        context = autocast(device_type="cuda", dtype=dtype)
    assert records[0].filename == __file__  # points at the caller
    with context:
        assert not torch.is_autocast_enabled("cuda")
        assert matmul_dtype() == torch.float32
    with autocast(device_type="cuda", enabled=False):
        assert matmul_dtype() == torch.float32


@needs_no_cuda
def test_cuda_without_cuda_inside_a_cpu_region_leaves_the_cpu_region_on():
    with autocast(device_type="cpu"):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            context = autocast(device_type="cuda")
        with context:
            assert matmul_dtype() == torch.bfloat16  # the CPU's autocast still applies


@needs_cuda
def test_cuda_default_is_float16():
    with autocast(device_type="cuda"):
        assert (torch.ones(2, 2, device="cuda") @ torch.ones(2, 2, device="cuda")).dtype == (
            torch.float16
        )


def test_device_type_errors_are_both_mmengines_and_torchs_classes():
    # MMEngine raises a ValueError for a device type it does not autocast on, torch a
    # RuntimeError for one it does not know: code catching either keeps working.
    for device_type in ("cpx", "meta"):
        with pytest.raises(AutocastDeviceError) as info:
            autocast(device_type=device_type)
        assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)


@pytest.mark.skipif(is_mps_available(), reason="needs a machine without mps")
def test_mps_on_a_machine_without_it_is_mmengines_value_error(monkeypatch):
    # The run's device says mps (MMEngine's test replaces get_device so), the machine has none.
    monkeypatch.setattr(AUTOCAST_MODULE, "get_device", lambda: "mps")
    with autocast(enabled=False):  # nothing to switch off: runs in full precision
        assert matmul_dtype() == torch.float32
    with pytest.raises(
        ValueError,
        match=r"User specified autocast device_type 'mps', and this machine has no usable mps "
        r"device \(the run uses 'mps'\)",
    ):
        autocast(enabled=True)


@pytest.mark.parametrize("device_type", ["mlu", "npu", "musa"])
def test_a_vendor_device_without_its_extension_fails_even_disabled(device_type, monkeypatch):
    if device_type in KNOWN_TO_TORCH:
        pytest.skip(f"torch knows {device_type} here (its extension is installed)")
    # MMEngine hands these to torch.autocast, which does not know them without the extension.
    monkeypatch.setattr(AUTOCAST_MODULE, "get_device", lambda: device_type)
    with pytest.raises(
        RuntimeError,
        match=rf"autocast device_type '{device_type}': torch .* does not know this device type "
        rf"\(its vendor's extension, torch_{device_type}, is not installed\), even for a "
        r"disabled region",
    ):
        autocast(enabled=False)
