"""treadle.runner.testing, .infer and .hub against MMEngine 0.10's mmengine.testing,
mmengine.infer and mmengine.hub: the same calls give the same results, the sample downstream
test file passes against both libraries, and the deliberate differences are asserted as such.

Runs only where mmengine is installed: ``hatch run mmengine:pytest``.
"""

from __future__ import annotations

import os
import types
import unittest
import warnings
from typing import ClassVar

import numpy as np
import pytest
import torch
from torch import nn

mm_testing = pytest.importorskip("mmengine.testing")
mm_infer = pytest.importorskip("mmengine.infer")
mm_hub = pytest.importorskip("mmengine.hub")

import treadle.runner.testing as tr_testing  # noqa: E402
from treadle.runner.hub import get_config  # noqa: E402
from treadle.runner.infer import BaseInferencer  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(__file__), "test_testing_downstream_sample.py")
LINEAR = "treadle_toy_zoo::toy/toy-linear_4xb3_2e.py"
MLP = "treadle_toy_zoo::toy/toy-mlp_4xb3_2e.py"


def outcome(function, *args, **kwargs):
    """What a user observes: ('ok', result) or ('error', the exception's type)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's FutureWarning about assert_allclose
        try:
            return "ok", function(*args, **kwargs)
        except Exception as error:  # comparing what each library raises
            return "error", type(error)


def both(name, *args, **kwargs):
    return (
        outcome(getattr(mm_testing, name), *args, **kwargs),
        outcome(getattr(tr_testing, name), *args, **kwargs),
    )


def test_same_public_names():
    assert sorted(mm_testing.__all__) == sorted(tr_testing.__all__)


ALLCLOSE_CASES = [
    (torch.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-6], {}),
    (torch.tensor([1.0]), torch.tensor([1.00005]), {}),
    (torch.tensor([1.0]), torch.tensor([1.001]), {}),
    (torch.tensor([1.0], dtype=torch.float64), [1.0 + 1e-6], {}),
    (torch.tensor([1.0], dtype=torch.float16), [1.0005], {}),
    (torch.tensor([1, 2]), torch.tensor([1.0, 2.0]), {}),
    ([float("nan")], [float("nan")], {}),
    ([float("nan")], [float("nan")], dict(equal_nan=False)),
    (torch.tensor([1.0]), torch.tensor([1.5]), dict(rtol=0, atol=0.6)),
    (torch.tensor([1.0]), torch.tensor([1.0]), dict(rtol=0.1)),
    (torch.ones(2), torch.ones(3), {}),
    (torch.ones(2, 1), torch.ones(2), {}),
]


@pytest.mark.parametrize(("actual", "expected", "kwargs"), ALLCLOSE_CASES)
def test_assert_allclose_passes_and_fails_alike(actual, expected, kwargs):
    mm, tr = both("assert_allclose", actual, expected, **kwargs)
    assert mm == tr


BOOL_CASES = [
    ("assert_dict_contains_subset", dict(a=1, b=torch.ones(3)), dict(b=torch.ones(3))),
    ("assert_dict_contains_subset", dict(a=1, b=torch.ones(3)), dict(a=2)),
    ("assert_dict_contains_subset", dict(a=1), dict(z=1)),
    ("assert_dict_contains_subset", dict(a=np.zeros(2)), dict(a=np.zeros(2))),
    ("assert_dict_contains_subset", dict(a=[1, 2]), dict(a=(1, 2))),
    ("assert_dict_contains_subset", dict(a=dict(b=1)), dict(a=dict(b=1))),
    ("assert_dict_contains_subset", dict(a=torch.tensor([1, 0])), dict(a=torch.tensor([1, 1]))),
    ("assert_attrs_equal", nn.Linear(2, 3), dict(in_features=2, out_features=3)),
    ("assert_attrs_equal", nn.Linear(2, 3), dict(in_features=3)),
    ("assert_attrs_equal", nn.Linear(2, 3), dict(missing=1)),
    ("assert_dict_has_keys", dict(a=1, b=2), ["a"]),
    ("assert_dict_has_keys", dict(a=1), ["a", "b"]),
    ("assert_keys_equal", ["a", "b"], ("b", "a")),
    ("assert_keys_equal", ["a"], ["a", "b"]),
]


@pytest.mark.parametrize(("name", "first", "second"), BOOL_CASES)
def test_bool_helpers_agree(name, first, second):
    mm, tr = both(name, first, second)
    assert mm == tr


@pytest.mark.parametrize(
    "module",
    [
        nn.BatchNorm2d(2),
        nn.SyncBatchNorm(2),
        nn.InstanceNorm1d(2),
        nn.GroupNorm(1, 2),
        nn.LayerNorm(2),
        nn.Conv2d(2, 2, 1),
        nn.Linear(2, 2),
    ],
)
def test_assert_is_norm_layer_agrees(module):
    assert both("assert_is_norm_layer", module)[0] == both("assert_is_norm_layer", module)[1]


def test_rms_norm_is_a_norm_layer_in_treadle_only():
    mm, tr = both("assert_is_norm_layer", nn.RMSNorm(2))
    assert (mm, tr) == (("ok", False), ("ok", True))


def _zeroed(value, bias=True):
    layer = nn.Linear(2, 2, bias=bias)
    with torch.no_grad():
        layer.weight.fill_(value)
        if bias:
            layer.bias.zero_()
    return layer


@pytest.mark.parametrize("layer", [_zeroed(0), _zeroed(1e-9), _zeroed(1.0), _zeroed(0, False)])
def test_assert_params_all_zeros_agrees(layer):
    mm, tr = both("assert_params_all_zeros", layer)
    assert mm == tr


def test_params_of_a_module_without_weight():
    mm, tr = both("assert_params_all_zeros", nn.ReLU())
    assert (mm, tr) == (("error", AttributeError), ("error", TypeError))


def _mm_case():
    class Case(mm_testing.RunnerTestCase):
        def runTest(self):
            pass

    return Case()


def _tr_case():
    class Case(tr_testing.RunnerTestCase):
        def runTest(self):
            pass

    return Case()


def test_runner_test_case_default_configs_are_mmengines():
    mm, tr = _mm_case(), _tr_case()
    mm.setUp()
    tr.setUp()
    try:
        for name in ("epoch_based_cfg", "iter_based_cfg"):
            mine, theirs = getattr(tr, name).to_dict(), getattr(mm, name).to_dict()
            assert mine.pop("work_dir") == tr.temp_dir.name
            assert theirs.pop("work_dir") == mm.temp_dir.name
            assert mine == theirs, name
        assert tr.dist_cfg == mm.dist_cfg
    finally:
        mm.tearDown()
        tr.tearDown()


def _as_mmengine(source: str) -> str:
    for treadle_name, mmengine_name in (
        ("treadle.runner.hooks", "mmengine.hooks"),
        ("treadle.runner.registry", "mmengine.registry"),
        ("treadle.runner.testing", "mmengine.testing"),
    ):
        source = source.replace(treadle_name, mmengine_name)
    assert "treadle" not in source.replace('"""', "").split("import copy", 1)[1]
    return source


def test_the_downstream_sample_passes_against_mmengine(tmp_path, monkeypatch):
    # The same test file, its imports renamed back: what it asserts holds for MMEngine too.
    monkeypatch.chdir(tmp_path)
    with open(SAMPLE) as file:
        source = _as_mmengine(file.read())
    module = types.ModuleType("mmengine_downstream_sample")
    exec(compile(source, "mmengine_downstream_sample.py", "exec"), module.__dict__)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    with warnings.catch_warnings(), open(os.devnull, "w") as devnull:
        warnings.simplefilter("ignore")
        result = unittest.TextTestRunner(stream=devnull, verbosity=0).run(suite)
    assert result.testsRun == 6
    assert result.failures == []
    # MMEngine 0.10.7 cannot resume under torch >= 2.6: torch.load(weights_only=True) by
    # default refuses the objects its checkpoints hold. treadle's checkpoints load that way.
    (failed, trace), *others = result.errors
    assert others == [], others
    assert failed._testMethodName == "test_resume"
    assert "weights_only" in trace


class _Probe:
    preprocess_kwargs: ClassVar[set[str]] = {"scale"}
    forward_kwargs: ClassVar[set[str]] = {"mode"}
    visualize_kwargs: ClassVar[set[str]] = {"show"}
    postprocess_kwargs: ClassVar[set[str]] = {"with_scores"}


def _bare(base):
    # The helpers need no model: an instance without __init__ is enough to call them.
    attributes = {k: v for k, v in vars(_Probe).items() if not k.startswith("__")}
    made = type("Probe", (base,), attributes)
    made.__abstractmethods__ = frozenset()
    return object.__new__(made)


@pytest.mark.parametrize(
    "kwargs", [dict(), dict(scale=2), dict(scale=1, mode="x", show=True, with_scores=False)]
)
def test_dispatch_kwargs_agrees(kwargs):
    mm, tr = _bare(mm_infer.BaseInferencer), _bare(BaseInferencer)
    assert mm._dispatch_kwargs(**kwargs) == tr._dispatch_kwargs(**kwargs)


def test_unknown_keyword_is_a_value_error_in_both():
    mm, tr = _bare(mm_infer.BaseInferencer), _bare(BaseInferencer)
    assert outcome(mm._dispatch_kwargs, bogus=1) == outcome(tr._dispatch_kwargs, bogus=1)


@pytest.mark.parametrize(("n", "size"), [(0, 2), (5, 2), (4, 2), (3, 5), (3, 1)])
def test_get_chunk_data_agrees(n, size):
    mm, tr = _bare(mm_infer.BaseInferencer), _bare(BaseInferencer)
    assert list(mm._get_chunk_data(range(n), size)) == list(tr._get_chunk_data(range(n), size))


@pytest.fixture
def mmengine_knows_the_toy_zoo(monkeypatch):
    """MMEngine serves only the OpenMMLab packages it lists, and installs them with pip: let
    it see treadle_toy_zoo as one of them, installed."""
    import mmengine.config.utils as mm_config_utils
    import mmengine.hub.hub as mm_hub_module
    import treadle_toy_zoo

    folder = os.path.dirname(treadle_toy_zoo.__file__)
    monkeypatch.setitem(mm_config_utils.MODULE2PACKAGE, "treadle_toy_zoo", "treadle_toy_zoo")
    monkeypatch.setattr(mm_hub_module, "install_package", lambda package: None)
    monkeypatch.setattr(mm_hub_module, "get_installed_path", lambda package: folder)


@pytest.mark.parametrize("path", [LINEAR, MLP])
def test_get_config_agrees(mmengine_knows_the_toy_zoo, path):
    theirs = mm_hub.get_config(path, pretrained=True)
    mine = get_config(path, pretrained=True)
    if isinstance(theirs.model_path, list):
        # A metafile entry with a list of Weights: MMEngine puts the list in model_path (and
        # get_model then fails to load it); treadle takes the first, as inferencers do.
        assert mine.model_path == theirs.model_path[0]
    else:
        assert mine.model_path == theirs.model_path
    assert mine.model.to_dict() == theirs.model.to_dict()


def test_list_models_agrees_where_aliases_are_lists(mmengine_knows_the_toy_zoo):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = mm_infer.BaseInferencer.list_models("treadle_toy_zoo", patterns="toy-mlp")
    assert BaseInferencer.list_models("treadle_toy_zoo", patterns="toy-mlp") == theirs


def test_a_single_alias_is_a_name_not_letters(mmengine_knows_the_toy_zoo):
    # MMEngine extends the name list with a str Alias: its letters become model names.
    theirs = mm_infer.BaseInferencer.list_models("treadle_toy_zoo", patterns="t$")
    mine = BaseInferencer.list_models("treadle_toy_zoo", patterns="t$")
    assert "t" in theirs and mine == []
    assert "toy-linear" in BaseInferencer.list_models("treadle_toy_zoo")
