"""Optimizers of optional packages: always in OPTIMIZERS by name, built (and stepped) with the
real package where it is installed, an ImportError naming the extra where it is not."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

from treadle.runner.optim import build_optim_wrapper
from treadle.runner.optim.optimizer import builder
from treadle.runner.registry import OPTIMIZERS

# (registered name, module to import, attribute, extra, arguments)
OPTIMIZERS_OF_PACKAGES = [
    ("DAdaptAdaGrad", "dadaptation", "DAdaptAdaGrad", "dadaptation", dict(lr=1.0)),
    ("DAdaptAdam", "dadaptation", "DAdaptAdam", "dadaptation", dict(lr=1.0)),
    ("DAdaptSGD", "dadaptation", "DAdaptSGD", "dadaptation", dict(lr=1.0)),
    ("DAdaptAdan", "dadaptation", "DAdaptAdan", "dadaptation", dict(lr=1.0)),
    ("DAdaptLion", "dadaptation", "DAdaptLion", "dadaptation", dict(lr=1.0)),
    ("Lion", "lion_pytorch", "Lion", "lion", dict(lr=1e-3)),
    ("SophiaG", "sophia", "SophiaG", "sophia", dict(lr=1e-3)),
    ("AdamW8bit", "bitsandbytes.optim", "AdamW8bit", "bitsandbytes", dict(lr=1e-3)),
    ("Adam8bit", "bitsandbytes.optim", "Adam8bit", "bitsandbytes", dict(lr=1e-3)),
    ("SGD8bit", "bitsandbytes.optim", "SGD8bit", "bitsandbytes", dict(lr=1e-3, momentum=0.9)),
    ("PagedAdamW", "bitsandbytes.optim", "PagedAdamW", "bitsandbytes", dict(lr=1e-3)),
    ("bnb_Adam", "bitsandbytes.optim", "Adam", "bitsandbytes", dict(lr=1e-3)),
    ("bnb_Lion", "bitsandbytes.optim", "Lion", "bitsandbytes", dict(lr=1e-3)),
    ("Adafactor", "transformers", "Adafactor", "transformers", dict(lr=1e-3, relative_step=False)),
]
IDS = [case[0] for case in OPTIMIZERS_OF_PACKAGES]
# The distribution of each top-level module, for the messages.
DISTRIBUTIONS = {
    "dadaptation": "dadaptation",
    "lion_pytorch": "lion-pytorch",
    "sophia": "Sophia-Optimizer",
    "bitsandbytes": "bitsandbytes",
    "transformers": "transformers",
}


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))


def one_step(optimizer, net):
    before = [p.detach().clone() for p in net.parameters()]
    net(torch.randn(8, 64)).pow(2).mean().backward()
    optimizer.step()
    return any(not torch.equal(a, p) for a, p in zip(before, net.parameters(), strict=True))


@pytest.mark.parametrize(
    ("name", "module", "attribute", "extra", "kwargs"), OPTIMIZERS_OF_PACKAGES, ids=IDS
)
def test_the_real_optimizer_is_built_and_steps(name, module, attribute, extra, kwargs):
    package = pytest.importorskip(module)
    net = model()
    optim_wrapper = build_optim_wrapper(
        net,
        dict(
            optimizer=dict(type=name, weight_decay=0.01, **kwargs),
            # Per-group weight decays (D-Adaptation refuses per-group learning rates).
            paramwise_cfg=dict(custom_keys={"2.": dict(decay_mult=0.0)}),
        ),
    )
    assert type(optim_wrapper.optimizer) is getattr(package, attribute)
    groups = optim_wrapper.optimizer.param_groups
    assert [g["weight_decay"] for g in groups] == [0.01, 0.01, 0.0, 0.0]
    assert one_step(optim_wrapper.optimizer, net)


@pytest.mark.parametrize(
    ("name", "module", "attribute", "extra", "kwargs"), OPTIMIZERS_OF_PACKAGES, ids=IDS
)
def test_a_missing_package_names_the_extra_to_install(
    monkeypatch, name, module, attribute, extra, kwargs
):
    top = module.split(".")[0]
    monkeypatch.setitem(sys.modules, module, None)  # import fails for real
    monkeypatch.setitem(sys.modules, top, None)
    if top == "sophia":
        monkeypatch.setitem(sys.modules, "Sophia", None)
    pattern = (
        rf"the optimizer '{name}' is {attribute} of the package {DISTRIBUTIONS[top]}, which "
        rf"could not be used \(import {module}: .*Install it with: pip install "
        rf"treadle-runner\[{extra}\]"
    )
    with pytest.raises(ImportError, match=pattern):
        OPTIMIZERS.build(dict(type=name, params=[nn.Parameter(torch.zeros(2))], **kwargs))
    # Through the constructor it fails before anything is built, with the same message.
    with pytest.raises(ImportError, match=pattern):
        build_optim_wrapper(model(), dict(optimizer=dict(type=name, **kwargs)))


def test_adafactor_without_transformers_points_at_torchs_own(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(
        ImportError,
        match=r"torch's own Adafactor is registered as "
        r"'TorchAdafactor'.*treadle-runner\[transformers\]",
    ):
        build_optim_wrapper(model(), dict(optimizer=dict(type="Adafactor", lr=1e-3)))
    optim_wrapper = build_optim_wrapper(model(), dict(optimizer=dict(type="TorchAdafactor")))
    assert type(optim_wrapper.optimizer) is torch.optim.Adafactor


def test_a_package_without_the_class_says_so(monkeypatch):
    """An older bitsandbytes that lacks an optimizer: the message names what is missing."""
    import types

    monkeypatch.setitem(sys.modules, "bitsandbytes.optim", types.ModuleType("bitsandbytes.optim"))
    with pytest.raises(
        ImportError,
        match=r"bitsandbytes\.optim has no optimizer class "
        r"'AdEMAMix8bit'.*treadle-runner\[bitsandbytes\]",
    ):
        OPTIMIZERS.build(dict(type="AdEMAMix8bit", params=[nn.Parameter(torch.zeros(2))]))


def test_every_name_is_registered_whether_or_not_installed():
    expected = {case[0] for case in OPTIMIZERS_OF_PACKAGES}
    registered = set(
        builder.DADAPTATION_OPTIMIZERS
        + builder.LION_OPTIMIZERS
        + builder.SOPHIA_OPTIMIZERS
        + builder.BITSANDBYTES_OPTIMIZERS
        + builder.TRANSFORMERS_OPTIMIZERS
    )
    assert expected <= registered
    assert all(name in OPTIMIZERS for name in registered)
    # bitsandbytes' names that torch (or lion-pytorch) took have the prefix, the others not.
    assert {"bnb_Adam", "bnb_AdamW", "bnb_SGD", "bnb_Adagrad", "bnb_RMSprop", "bnb_Lion"} <= (
        registered
    )
    assert "Lion8bit" in registered and "bnb_Lion8bit" not in registered
    assert OPTIMIZERS.get("Lion").package.distribution == "lion-pytorch"


def test_sophia_is_found_under_its_old_module_name_too(monkeypatch):
    import types

    old = types.ModuleType("Sophia")

    class SophiaG(torch.optim.SGD):
        pass

    old.SophiaG = SophiaG
    monkeypatch.setitem(sys.modules, "sophia", None)
    monkeypatch.setitem(sys.modules, "Sophia", old)
    built = OPTIMIZERS.build(dict(type="SophiaG", params=[nn.Parameter(torch.zeros(2))], lr=0.1))
    assert type(built) is SophiaG


def test_names_resolve_with_nothing_imported_and_no_optional_package_is_imported():
    code = (
        "import sys\n"
        "from treadle.runner.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS\n"
        "print(OPTIMIZERS.get('Lion').__name__, OPTIMIZERS.get('AdamW').__module__,\n"
        "      OPTIM_WRAPPER_CONSTRUCTORS.get('DefaultOptimWrapperConstructor').__name__)\n"
        "print(sorted(m for m in ('bitsandbytes', 'transformers', 'lion_pytorch', 'dadaptation',\n"
        "                         'sophia', 'Sophia') if m in sys.modules))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.splitlines() == [
        "Lion torch.optim.adamw DefaultOptimWrapperConstructor",
        "[]",
    ]
