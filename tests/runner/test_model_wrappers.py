"""is_model_wrapper, what MODEL_WRAPPERS holds, and MMFullyShardedDataParallel's argument
errors (raised before any process group is needed). Wrapping and training in a real group is
in test_model_wrappers_distributed.py."""

from __future__ import annotations

import pytest
import torch.nn as nn
from torch.nn.parallel import DataParallel, DistributedDataParallel

from treadle.registry import Registry
from treadle.runner.model import (
    MMDistributedDataParallel,
    MMFullyShardedDataParallel,
    MMSeparateDistributedDataParallel,
    is_model_wrapper,
)
from treadle.runner.registry import MODEL_WRAPPERS


def test_torch_and_mm_wrappers_are_registered():
    for cls in (
        DataParallel,
        DistributedDataParallel,
        MMDistributedDataParallel,
        MMSeparateDistributedDataParallel,
        MMFullyShardedDataParallel,
    ):
        assert MODEL_WRAPPERS.get(cls.__name__) is cls


def test_is_model_wrapper_for_data_parallel_and_plain_modules():
    assert is_model_wrapper(DataParallel(nn.Linear(1, 1)))
    assert not is_model_wrapper(nn.Linear(1, 1))


def test_subclasses_of_registered_wrappers_count():
    class MyDataParallel(DataParallel):
        pass

    assert is_model_wrapper(MyDataParallel(nn.Linear(1, 1)))


@pytest.fixture
def child_registry():
    wrappers = Registry("model_wrapper", parent=MODEL_WRAPPERS, scope="wrapper_test_child")
    yield wrappers
    # Leave the process-wide tree as it was.
    MODEL_WRAPPERS._children.pop("wrapper_test_child")


def test_wrappers_registered_in_a_child_registry_count(child_registry):
    wrappers = child_registry

    @wrappers.register_module()
    class Wrapper(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    assert is_model_wrapper(Wrapper(nn.Linear(1, 1)))
    # Asked of another registry tree, the same wrapper is not one.
    assert not is_model_wrapper(Wrapper(nn.Linear(1, 1)), registry=Registry("other"))


def test_functions_registered_as_wrappers_are_skipped():
    registry = Registry("wrappers")
    registry.register_module(name="factory", module=lambda module: module)
    assert not is_model_wrapper(nn.Linear(1, 1), registry=registry)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            dict(sharding_strategy="FULL_SHRAD"),
            ValueError,
            r"sharding_strategy='FULL_SHRAD' is not one of .*did you mean 'FULL_SHARD'",
        ),
        (dict(sharding_strategy=3), TypeError, "sharding_strategy must be None, a name or a "),
        (
            dict(backward_prefetch="BACKWARD_PREFETCH"),
            ValueError,
            "backward_prefetch='BACKWARD_PREFETCH' is not one of BACKWARD_PRE, BACKWARD_POST",
        ),
        (dict(cpu_offload="yes"), TypeError, "cpu_offload must be None, a bool or a CPUOffload"),
        (
            dict(mixed_precision=dict(param_dtype="half_float")),
            ValueError,
            r"mixed_precision\['param_dtype'\] must be a torch dtype or its name",
        ),
        (dict(mixed_precision="fp16"), TypeError, "mixed_precision must be None, a dict"),
        (
            dict(auto_wrap_policy="no_such_policy"),
            KeyError,
            "auto_wrap_policy: .*no_such_policy",
        ),
        (
            dict(auto_wrap_policy=dict(min_num_params=10)),
            KeyError,
            r"the auto_wrap_policy dict needs a 'type' .* got keys \['min_num_params'\]",
        ),
        (dict(param_init_fn=3), TypeError, "param_init_fn must be None, a name"),
        (
            dict(ignored_parameters=["linear.wieght"]),
            KeyError,
            "no parameter 'linear.wieght'; did you mean 'linear.weight'",
        ),
        (dict(ignored_modules=["lnear"]), KeyError, "no submodule 'lnear'; did you mean 'linear'"),
    ],
)
def test_fsdp_argument_errors_name_the_argument(kwargs, error, message):
    model = nn.Sequential()
    model.add_module("linear", nn.Linear(2, 2))
    with pytest.raises(error, match=message):
        MMFullyShardedDataParallel(model, **kwargs)
