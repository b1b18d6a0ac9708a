"""``compute_loss=True`` on two gloo processes with uneven shards: the validation loss is the
mean over every sample of the set (sums and counts reduced across ranks), not a mean of the
ranks' means; a rank with no sample at all still takes part in the reduction."""

from pathlib import Path

import gloo_group
import pytest

SCENARIOS = Path(__file__).parent / "workers" / "val_loss_scenarios.py"


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, 2, tmp_path_factory.mktemp("val_loss"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_uneven_shards_give_the_mean_over_the_whole_set(value):
    rank0, rank1 = value(0, "scenario_uneven_shards"), value(1, "scenario_uneven_shards")
    assert rank0["wrapper"] == "MMDistributedDataParallel"
    assert (rank0["local_samples"], rank1["local_samples"]) == (4, 3)
    assert rank0["expected"] == pytest.approx(rank1["expected"])  # the same weights
    for result in (rank0, rank1):
        assert list(result["metrics"]) == ["val/loss"]
        assert result["metrics"]["val/loss"] == pytest.approx(rank0["expected"], abs=1e-6)


def test_a_rank_without_batches_and_a_term_of_one_rank_are_reduced(value):
    name = "scenario_a_rank_without_batches_and_a_term_of_one_rank"
    rank0, rank1 = value(0, name), value(1, name)
    assert rank0 == rank1
    assert rank0["empty"] == pytest.approx({"val/loss": 2.0})  # (1*2 + 4*1) / 3
    # loss: (1*1 + 2*2) / 3; loss_x: rank 1's 5 samples only.
    assert rank0["mixed"] == pytest.approx({"val/loss": 5 / 3, "val/loss_x": 3.0})


def test_every_term_is_reduced(value):
    rank0, rank1 = value(0, "scenario_several_terms"), value(1, "scenario_several_terms")
    assert rank0["metrics"] == pytest.approx(rank1["metrics"])
    metrics = rank0["metrics"]
    assert list(metrics) == ["val/loss", "val/loss_a", "val/loss_b", "val/acc"]
    assert metrics["val/loss_a"] == pytest.approx(rank0["expected"], abs=1e-6)
    assert metrics["val/loss"] == pytest.approx(1.75 * rank0["expected"], abs=1e-6)
