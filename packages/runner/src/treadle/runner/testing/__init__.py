"""treadle.runner.testing: helpers for the tests of projects built on treadle.

The API follows MMEngine 0.10's ``mmengine.testing``: ``from mmengine.testing import
RunnerTestCase, assert_allclose`` becomes ``from treadle.runner.testing import ...``, and a test
suite written against MMEngine's helpers runs after renaming its imports.

Example:
    >>> from treadle.runner.testing import RunnerTestCase, assert_dict_has_keys
    >>> class TestTrain(RunnerTestCase):
    ...     def test_train(self):
    ...         runner = self.build_runner(self.epoch_based_cfg)
    ...         runner.train()
    ...         assert assert_dict_has_keys(runner.message_hub.log_scalars, ['train/loss'])
"""

from __future__ import annotations

from .compare import (
    assert_allclose,
    assert_attrs_equal,
    assert_dict_contains_subset,
    assert_dict_has_keys,
    assert_is_norm_layer,
    assert_keys_equal,
    assert_params_all_zeros,
)
from .runner_test_case import RunnerTestCase
from .script import check_python_script

__all__ = [
    "RunnerTestCase",
    "assert_allclose",
    "assert_attrs_equal",
    "assert_dict_contains_subset",
    "assert_dict_has_keys",
    "assert_is_norm_layer",
    "assert_keys_equal",
    "assert_params_all_zeros",
    "check_python_script",
]
