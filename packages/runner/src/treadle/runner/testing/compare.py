"""Comparison helpers for tests, with MMEngine 0.10's names and results.

The ``assert_dict_*``, ``assert_keys_equal``, ``assert_attrs_equal``, ``assert_is_norm_layer``
and ``assert_params_all_zeros`` functions return a bool (write ``assert assert_...(...)``), as
MMEngine's do; only ``assert_allclose`` raises.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.instancenorm import _InstanceNorm

# The default tolerances of torch.testing.assert_allclose (deprecated in torch, removed some
# day), which MMEngine's assert_allclose wraps; other dtypes compare exactly, as there.
_TOLERANCES = {
    torch.float16: (1e-3, 1e-3),
    torch.float32: (1e-4, 1e-5),
    torch.float64: (1e-5, 1e-8),
}
NORM_LAYERS: tuple[type, ...] = (_BatchNorm, _InstanceNorm, nn.GroupNorm, nn.LayerNorm)
if hasattr(nn, "RMSNorm"):
    NORM_LAYERS += (nn.RMSNorm,)


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str | Callable[[str], str] | None = "",
) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close.

    Non-tensors are made tensors (``expected`` in ``actual``'s dtype); dtypes may differ,
    devices may not; NaNs are equal by default. Without ``rtol`` and ``atol``, the tolerances
    are those of the less precise dtype (float32: rtol 1e-4, atol 1e-5). ``msg`` replaces the
    message, or is called with it.

    Example:
        >>> assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-6])
        >>> assert_allclose(torch.tensor([1.0]), [1.1])
        Traceback (most recent call last):
        AssertionError: Tensor-likes are not close! ...
    """
    if not isinstance(actual, torch.Tensor):
        actual = torch.tensor(actual)
    if not isinstance(expected, torch.Tensor):
        expected = torch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    torch.testing.assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )


def _differ(value: Any, expected: Any) -> bool:
    """Whether two values differ: mappings and sequences compared item by item, tensors and
    arrays element-wise (another shape differs; no 'ambiguous truth value' errors)."""
    if isinstance(value, Mapping) and isinstance(expected, Mapping):
        return value.keys() != expected.keys() or any(_differ(value[k], expected[k]) for k in value)
    if isinstance(value, torch.Tensor) or isinstance(expected, torch.Tensor):
        try:
            a, b = torch.as_tensor(value), torch.as_tensor(expected)
        except (TypeError, ValueError, RuntimeError):
            return True
        return a.shape != b.shape or bool((a != b).any())
    if isinstance(value, np.ndarray) or isinstance(expected, np.ndarray):
        a, b = np.asarray(value), np.asarray(expected)
        return a.shape != b.shape or bool(np.any(a != b))
    if isinstance(value, (list, tuple)) and isinstance(expected, (list, tuple)):
        return (
            type(value) is not type(expected)
            or len(value) != len(expected)
            or any(_differ(a, b) for a, b in zip(value, expected, strict=True))
        )
    result = value != expected
    return result if isinstance(result, bool) else bool(np.any(result))


def assert_dict_contains_subset(dict_obj: Mapping[Any, Any], expected_subset: Mapping) -> bool:
    """Whether every key of ``expected_subset`` is in ``dict_obj`` with an equal value
    (tensors and arrays compared element-wise).

    Example:
        >>> assert_dict_contains_subset(dict(a=1, b=torch.ones(2)), dict(b=torch.ones(2)))
        True
    """
    return all(
        key in dict_obj and not _differ(dict_obj[key], value)
        for key, value in expected_subset.items()
    )


def assert_attrs_equal(obj: Any, expected_attrs: Mapping[str, Any]) -> bool:
    """Whether ``obj`` has each attribute of ``expected_attrs`` with an equal value.

    Example:
        >>> assert_attrs_equal(nn.Linear(2, 3), dict(in_features=2, out_features=3))
        True
    """
    return all(
        hasattr(obj, name) and not _differ(getattr(obj, name), value)
        for name, value in expected_attrs.items()
    )


def assert_dict_has_keys(obj: Mapping[str, Any], expected_keys: Iterable[str]) -> bool:
    """Whether ``obj`` has every key of ``expected_keys`` (and maybe others).

    Example:
        >>> assert_dict_has_keys(dict(a=1, b=2), ['a'])
        True
    """
    return set(expected_keys).issubset(obj.keys())


def assert_keys_equal(result_keys: Iterable[str], target_keys: Iterable[str]) -> bool:
    """Whether the two collections hold the same keys, in any order.

    Example:
        >>> assert_keys_equal(['a', 'b'], ('b', 'a'))
        True
    """
    return set(result_keys) == set(target_keys)


def assert_is_norm_layer(module: Any) -> bool:
    """Whether ``module`` is a normalization layer (batch, sync batch, instance, group,
    layer or RMS norm).

    Example:
        >>> assert_is_norm_layer(nn.BatchNorm2d(3)), assert_is_norm_layer(nn.Conv2d(3, 3, 1))
        (True, False)
    """
    return isinstance(module, NORM_LAYERS)


def assert_params_all_zeros(module: nn.Module) -> bool:
    """Whether the ``weight`` (and ``bias``, if any) of ``module`` are all zeros.

    Example:
        >>> layer = nn.Linear(2, 2)
        >>> _ = nn.init.zeros_(layer.weight), nn.init.zeros_(layer.bias)
        >>> assert_params_all_zeros(layer)
        True
    """
    weight = getattr(module, "weight", None)
    if not isinstance(weight, torch.Tensor):
        raise TypeError(
            f"assert_params_all_zeros: the {type(module).__name__} has no weight tensor to check"
        )
    tensors = [weight]
    bias = getattr(module, "bias", None)
    if isinstance(bias, torch.Tensor):
        tensors.append(bias)
    # allclose, as MMEngine: values within 1e-8 of zero count as zero.
    return all(bool(t.detach().allclose(torch.zeros_like(t))) for t in tensors)
