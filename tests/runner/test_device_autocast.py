"""autocast: the device the run uses by default, bfloat16 on the CPU, float16 where asked, a
disabled region inside an enabled one, and errors where torch would only warn and do nothing."""

from __future__ import annotations

import pytest
import torch

from treadle.runner.device import get_device
from treadle.runner.device.autocast import autocast, resolve_autocast_dtype

needs_cpu_run = pytest.mark.skipif(get_device() != "cpu", reason="checks the CPU default")
needs_no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


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
        match=r"'cpx' \(did you mean 'cpu'\?\): torch .* has no "
        r"autocast for it; it has for cpu, cuda",
    ):
        autocast(device_type="cpx")
    with pytest.raises(ValueError, match=r"'meta'.*has no autocast"):
        autocast(device_type="meta")


def test_device_without_autocast_may_run_disabled():
    with autocast(device_type="meta", enabled=False):
        assert matmul_dtype() == torch.float32


@needs_no_cuda
def test_cuda_on_a_machine_without_it_fails_instead_of_doing_nothing():
    with pytest.raises(
        RuntimeError,
        match=r"'cuda': this machine has no usable cuda device "
        r"\(the run uses 'cpu'\)",
    ):
        autocast(device_type="cuda")
    with autocast(device_type="cuda", enabled=False):
        assert matmul_dtype() == torch.float32


@needs_cuda
def test_cuda_default_is_float16():
    with autocast(device_type="cuda"):
        assert (torch.ones(2, 2, device="cuda") @ torch.ones(2, 2, device="cuda")).dtype == (
            torch.float16
        )
