"""Importing treadle.runner.model, .optim or .checkpoint does not import FSDP or ZeRO's module
(about half a second, and dozens of torch.jit deprecation warnings): they load when used."""

import subprocess
import sys

import pytest

HEAVY = ("torch.distributed.fsdp", "torch.distributed.optim")


def loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(*[m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize(
    "package", ["treadle.runner.model", "treadle.runner.optim", "treadle.runner.checkpoint"]
)
def test_importing_the_package_loads_neither(package):
    assert loaded_after(f"import {package}") == []


def test_building_a_plain_optimizer_loads_no_more_than_torch_does():
    # torch itself may import them when an optimizer is made (torch._dynamo does): compare.
    plain = loaded_after(
        "import torch\ntorch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)"
    )
    code = (
        "import torch\n"
        "from treadle.runner.optim import build_optim_wrapper\n"
        "build_optim_wrapper(torch.nn.Linear(2, 2), dict(optimizer=dict(type='SGD', lr=0.1)))"
    )
    assert loaded_after(code) == plain


def test_the_lazy_names_are_the_real_classes():
    code = (
        "from treadle.runner.model import MMFullyShardedDataParallel as F\n"
        "from treadle.runner.optim import ZeroRedundancyOptimizer as Z\n"
        "from treadle.runner.registry import MODEL_WRAPPERS, OPTIMIZERS\n"
        "from treadle.runner.optim.optimizer.third_party import real_optimizer_class\n"
        "assert MODEL_WRAPPERS.get('MMFullyShardedDataParallel') is F\n"
        "assert real_optimizer_class(OPTIMIZERS.get('ZeroRedundancyOptimizer')) is Z\n"
        "import torch.distributed.fsdp, torch.distributed.optim\n"
        "assert issubclass(Z, torch.distributed.optim.ZeroRedundancyOptimizer)"
    )
    assert sorted(loaded_after(code)) == sorted(HEAVY)


def test_an_unknown_name_is_an_attribute_error():
    import treadle.runner.model
    import treadle.runner.optim

    with pytest.raises(AttributeError, match="has no attribute 'MMFSDP'"):
        treadle.runner.model.MMFSDP  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'ZeRO'"):
        treadle.runner.optim.ZeRO  # noqa: B018
