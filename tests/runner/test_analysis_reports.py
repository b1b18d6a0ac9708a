"""The analysis reports: parameter counts and their table, the complexity table, the model
printout with statistics, get_model_complexity_info and the one-call counters, in MMEngine's
formats (the expected texts are what MMEngine 0.10.7 prints for the same model)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from treadle.runner.analysis import (
    ActivationAnalyzer,
    FlopAnalyzer,
    activation_count,
    flop_count,
    get_model_complexity_info,
    parameter_count,
    parameter_count_table,
)
from treadle.runner.analysis.print_helper import _format_size, complexity_stats_table


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 10)
        self.fc2 = nn.Linear(10, 10)

    def forward(self, x):
        return self.fc1(self.fc2(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 10)
        self.inner = Inner()
        self.act = nn.ReLU()
        self.unused = nn.Linear(10, 2)

    def forward(self, x):
        return self.act(self.fc(self.inner(x)))


TABLE = """
+---------------------+----------------------+--------+--------------+
| module              | #parameters or shape | #flops | #activations |
+---------------------+----------------------+--------+--------------+
| model               | 0.352K               | 0.3K   | 30           |
|  fc                 |  0.11K               |  100   |  10          |
|   fc.weight         |   (10, 10)           |        |              |
|   fc.bias           |   (10,)              |        |              |
|  inner              |  0.22K               |  0.2K  |  20          |
|   inner.fc1         |   0.11K              |   100  |   10         |
|    inner.fc1.weight |    (10, 10)          |        |              |
|    inner.fc1.bias   |    (10,)             |        |              |
|   inner.fc2         |   0.11K              |   100  |   10         |
|    inner.fc2.weight |    (10, 10)          |        |              |
|    inner.fc2.bias   |    (10,)             |        |              |
|  unused             |  22                  |        |              |
|   unused.weight     |   (2, 10)            |        |              |
|   unused.bias       |   (2,)               |        |              |
+---------------------+----------------------+--------+--------------+
"""

ARCH = """
N/A indicates a possibly missing statistic due to how the module was called. Missing values are \
still included in the parent's total.
Net(
  #params: 0.35K, #flops: 0.3K, #acts: 30
  (fc): Linear(
    in_features=10, out_features=10, bias=True
    #params: 0.11K, #flops: 100, #acts: 10
  )
  (inner): Inner(
    #params: 0.22K, #flops: 0.2K, #acts: 20
    (fc1): Linear(
      in_features=10, out_features=10, bias=True
      #params: 0.11K, #flops: 100, #acts: 10
    )
    (fc2): Linear(
      in_features=10, out_features=10, bias=True
      #params: 0.11K, #flops: 100, #acts: 10
    )
  )
  (act): ReLU()
  (unused): Linear(
    in_features=10, out_features=2, bias=True
    #params: 22, #flops: N/A, #acts: N/A
  )
)"""


def test_get_model_complexity_info_numbers_table_and_arch():
    info = get_model_complexity_info(Net(), inputs=(torch.randn(1, 10),))
    assert {k: v for k, v in info.items() if not k.startswith("out")} == {
        "flops": 300,
        "flops_str": "0.3K",
        "activations": 30,
        "activations_str": "30",
        "params": 352,
        "params_str": "0.352K",
    }
    assert info["out_table"] == TABLE
    assert info["out_arch"] == ARCH


def test_get_model_complexity_info_from_input_shapes_and_switches():
    info = get_model_complexity_info(Net(), input_shape=(10,), show_table=False, show_arch=False)
    assert (info["flops"], info["out_table"], info["out_arch"]) == (300, "", "")

    class Two(nn.Module):
        def forward(self, a, b):
            return a @ b

    two = get_model_complexity_info(Two(), input_shape=((3, 4), (4, 5)), show_arch=False)
    assert two["flops"] == 60 and two["params"] == 0


def test_get_model_complexity_info_errors():
    with pytest.raises(ValueError, match='One of "input_shape" and "inputs" should be set'):
        get_model_complexity_info(Net())
    with pytest.raises(ValueError, match="cannot be both set"):
        get_model_complexity_info(Net(), input_shape=(10,), inputs=torch.ones(1, 10))
    with pytest.raises(ValueError, match=r"input_shape=\[10\]: give a tuple of ints"):
        get_model_complexity_info(Net(), input_shape=[10])


def test_parameter_count_and_table():
    counts = parameter_count(Net())
    assert (counts[""], counts["inner"], counts["inner.fc1.weight"]) == (352, 220, 100)
    lines = [line.rstrip() for line in parameter_count_table(Net(), max_depth=1).splitlines()]
    assert lines == [
        "     parameter count of Net",
        "+---------+--------------------+",
        "| name    | #elements or shape |",
        "+---------+--------------------+",
        "| model   | 0.4K               |",
        "|  fc     |  0.1K              |",
        "|  inner  |  0.2K              |",
        "|  unused |  22                |",
        "+---------+--------------------+",
    ]
    with pytest.raises(ValueError, match="max_depth must be an int >= 0, got -1"):
        parameter_count_table(Net(), max_depth=-1)


def test_shared_parameters_count_once():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4, bias=False)
            self.b = nn.Linear(4, 4, bias=False)
            self.b.weight = self.a.weight

    assert parameter_count(Tied())[""] == 16


def test_stats_table_depth_and_without_shapes():
    flops = FlopAnalyzer(Net(), (torch.randn(1, 10),))
    table = complexity_stats_table(flops, max_depth=1, show_param_shapes=False)
    rows = [line.split("|")[1].strip() for line in table.splitlines()[3:-1]]
    assert rows == ["model", "fc", "inner", "unused"]
    assert "or shape" not in table and "| #parameters |" in table


def test_one_call_counters_report_giga_and_mega():
    model, inputs = Net(), (torch.randn(1, 10),)
    gflops, unsupported = flop_count(model, inputs)
    assert dict(gflops) == {"linear": 300 / 1e9} and dict(unsupported) == {}
    acts, _ = activation_count(model, inputs, supported_ops={"aten::linear": lambda i, o: 1})
    assert dict(acts) == {"linear": 3 / 1e6}
    assert ActivationAnalyzer(model, inputs).total() == 30


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0"), (100, "100"), (101, "0.101K"), (13000, "13K"), (2_500_000, "2.5M"),
     (3.2e9, "3.2G"), (4e12, "4T"), (5e15, "5P")],
)  # fmt: skip
def test_format_size(value, text):
    assert _format_size(value) == text


def test_get_model_complexity_info_warns_once(caplog):
    from treadle.logging import MMLogger

    logger = MMLogger.get_current_instance()
    logger.addHandler(caplog.handler)
    try:
        model = nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.BatchNorm1d(4)).eval()
        get_model_complexity_info(model, input_shape=(4,), show_table=False, show_arch=False)
    finally:
        logger.removeHandler(caplog.handler)
    # gelu has no flop handle: one warning. batch_norm has flops, and no activations to count.
    assert [r.getMessage() for r in caplog.records] == [
        "Unsupported operator aten::gelu encountered 1 time(s)"
    ]
