"""Elastic training in one process: the plan of a global batch, the global order and its
position at every world size (ranks simulated), per-sample randomness, gradient accumulation
that trains as the whole batch, and every refusal with its message (bad input). The runs across
real process groups are in test_elastic_resume.py."""

from __future__ import annotations

import itertools
import random
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from elastic_toys import ElasticToyDataset, elastic_cfg, losses, weights

from treadle.runner.dataset import DefaultSampler, InfiniteSampler
from treadle.runner.dataset import elastic_sampler as sampler_module
from treadle.runner.dataset.elastic_plan import ElasticConfigError, elastic_plan
from treadle.runner.dataset.elastic_sampler import ElasticBatchSampler
from treadle.runner.dataset.sample_seeding import SampleKey, seeded_item, stream_seed
from treadle.runner.runner import Runner

# -- the plan ---------------------------------------------------------------------------------


def test_plan_shares_the_global_batch_and_accumulates_to_fit_the_micro_batch():
    plan = elastic_plan(dict(global_batch_size=64), world_size=4)
    assert (plan.per_rank, plan.micro_steps, plan.micro_batch) == (16, 1, 16)
    # The fewest equal micro-batches of at most micro_batch_size.
    cases = {1: (64, 4, 16), 2: (32, 2, 16), 4: (16, 1, 16), 8: (8, 1, 8)}
    for world, expected in cases.items():
        plan = elastic_plan(dict(global_batch_size=64, micro_batch_size=16), world_size=world)
        assert (plan.per_rank, plan.micro_steps, plan.micro_batch) == expected
    plan = elastic_plan(dict(global_batch_size=24, micro_batch_size=5), world_size=1)
    assert (plan.micro_steps, plan.micro_batch) == (6, 4)
    assert (
        "2 process(es) x 32 samples in 2 micro-batches of 16"
        in elastic_plan(dict(global_batch_size=64, micro_batch_size=16), world_size=2).describe()
    )
    assert elastic_plan(None, world_size=3) is None


def test_a_global_batch_the_world_size_cannot_share_names_both_and_the_setting():
    # No accumulation allowed (no micro_batch_size): the shares must be equal.
    with pytest.raises(ElasticConfigError) as error:
        elastic_plan(dict(global_batch_size=64), world_size=3)
    message = str(error.value)
    assert "global_batch_size=64 cannot be shared by this run's 3 processes" in message
    assert "64 / 3 is not a whole number of samples per process" in message
    assert "divides 64 (1, 2, 4, 8, 16, 32, 64)" in message
    assert "elastic.global_batch_size to a multiple of 3 (e.g. 63 or 66" in message
    assert "or allow accumulation with elastic.micro_batch_size" in message


def test_accumulation_makes_up_unequal_shares_with_weights_that_make_the_global_mean():
    plan = elastic_plan(dict(global_batch_size=64, micro_batch_size=8), world_size=3)
    shares = [plan.share(rank) for rank in range(3)]
    assert shares == [22, 21, 21] and [plan.offset(rank) for rank in range(3)] == [0, 22, 43]
    # The same number of micro-batches on every rank (DDP syncs on the last), none over 8.
    assert plan.micro_steps == 3 and plan.micro_batch == 8 and not plan.even
    assert [plan.micro_sizes(rank) for rank in range(3)] == [[8, 7, 7], [7, 7, 7], [7, 7, 7]]
    # Each micro-batch's loss times n*W*k/G, over k (accumulation) and W (DDP's mean): n/G.
    total = sum(
        plan.weight(n) / plan.micro_steps / plan.world_size
        for rank in range(3)
        for n in plan.micro_sizes(rank)
    )
    assert total == pytest.approx(1.0)
    assert all(plan.weight(n) / 3 / 3 == pytest.approx(n / 64) for n in (8, 7))
    assert "3 process(es) x 22, 21, 21 samples in 3 micro-batches of 8" in plan.describe()
    # Equal shares keep weight 1.
    assert elastic_plan(dict(global_batch_size=64, micro_batch_size=8), 4).weight(8) == 1.0


def test_unequal_shares_too_small_for_the_micro_batches_are_refused():
    with pytest.raises(ElasticConfigError) as error:
        elastic_plan(dict(global_batch_size=4, micro_batch_size=1), world_size=3)
    message = str(error.value)
    assert "global_batch_size=4 cannot be shared by this run's 3 processes" in message
    assert "every process runs the same 2 micro-batch(es)" in message
    assert "a process with 1 sample(s) of each global batch cannot fill them" in message


def test_micro_batches_of_unequal_shares_are_one_sample_apart_at_most():
    from treadle.runner.dataset.micro_batches import MicroBatchCollate

    assert MicroBatchCollate(list, micro_steps=3)(list(range(7))) == [[0, 1, 2], [3, 4], [5, 6]]
    assert MicroBatchCollate(list, micro_steps=2)(list(range(4))) == [[0, 1], [2, 3]]


@pytest.mark.parametrize(
    "elastic, error, words",
    [
        ([64], TypeError, "elastic must be a dict"),
        (dict(global_batch=64), KeyError, "elastic has no setting 'global_batch'"),
        (dict(micro_batch_size=4), KeyError, "elastic needs global_batch_size"),
        (dict(global_batch_size=0), TypeError, "global_batch_size must be a positive int"),
        (dict(global_batch_size=8, micro_batch_size=2.5), TypeError, "micro_batch_size must be"),
    ],
)
def test_malformed_elastic_settings_are_refused(elastic, error, words):
    with pytest.raises(error, match=words):
        elastic_plan(elastic, world_size=1)


# -- the global order -------------------------------------------------------------------------


def _rank_batches(monkeypatch, make_sampler, world, global_batch=8, state=None, count=None):
    """Every rank's batches (as dataset indices) with ``world`` simulated processes (unequal
    shares, with accumulation allowed, where ``world`` does not divide the global batch)."""
    found = []
    elastic = dict(global_batch_size=global_batch)
    if global_batch % world:
        elastic["micro_batch_size"] = 2
    for rank in range(world):
        monkeypatch.setattr(sampler_module, "get_dist_info", lambda r=rank: (r, world))
        plan = elastic_plan(elastic, world)
        batches = ElasticBatchSampler(make_sampler(), plan)
        if state is not None:
            batches.load_state_dict(state)
        iterator = iter(batches)
        taken = list(iterator) if count is None else [next(iterator) for _ in range(count)]
        found.append([[key.sample for key in batch] for batch in taken])
    return found


def _global(per_rank):
    """The global batches: the ranks' parts of each, in rank order."""
    return [_flat(rank[b] for rank in per_rank) for b in range(len(per_rank[0]))]


def _flat(lists):
    return list(itertools.chain.from_iterable(lists))


@pytest.mark.parametrize("round_up", [True, False])
def test_global_batches_are_the_same_at_every_world_size(monkeypatch, round_up):
    def sampler():
        default = DefaultSampler(range(30), seed=5, round_up=round_up)
        default.set_epoch(2)
        return default

    one = _global(_rank_batches(monkeypatch, sampler, 1))
    permutation = list(DefaultSampler(range(30), seed=7))  # seed + epoch
    flat = _flat(one)
    if round_up:  # 4 global batches, the last padded with the epoch's first samples
        assert len(one) == 4 and flat == permutation + permutation[:2]
    else:  # the incomplete last global batch dropped
        assert len(one) == 3 and flat == permutation[:24]
    for world in (2, 4):
        per_rank = _rank_batches(monkeypatch, sampler, world)
        assert _global(per_rank) == one
        # Rank r's part is contiguous: positions [b*8 + r*S, b*8 + (r+1)*S).
        share = 8 // world
        assert per_rank[1][0] == one[0][share : 2 * share]
    # 3 processes: shares of 3, 3 and 2, contiguous, the same global batches.
    per_rank = _rank_batches(monkeypatch, sampler, 3)
    assert _global(per_rank) == one
    assert [len(rank[0]) for rank in per_rank] == [3, 3, 2]
    assert per_rank[2][0] == one[0][6:8]


def test_a_stream_is_infinite_samplers_order_shared_the_same_way(monkeypatch):
    reference = InfiniteSampler(range(7), seed=2)
    iterator = iter(reference)
    expected = [next(iterator) for _ in range(8 * 5)]
    for world in (1, 2, 4):
        per_rank = _rank_batches(
            monkeypatch, lambda: InfiniteSampler(range(7), seed=2), world, count=5
        )
        assert _flat(_global(per_rank)) == expected


@pytest.mark.parametrize("saved_world, new_world", [(2, 1), (1, 2), (2, 4), (4, 2), (4, 1)])
@pytest.mark.parametrize("endless", [False, True])
def test_a_position_saved_at_one_world_size_goes_on_at_another(
    monkeypatch, saved_world, new_world, endless
):
    def sampler():
        if endless:
            return InfiniteSampler(range(30), seed=4)
        default = DefaultSampler(range(30), seed=4)
        default.set_epoch(1)
        return default

    whole = _global(_rank_batches(monkeypatch, sampler, 1, count=6 if endless else None))
    # The state after 2 global batches, saved by rank 0 of saved_world.
    monkeypatch.setattr(sampler_module, "get_dist_info", lambda: (0, saved_world))
    saving = ElasticBatchSampler(sampler(), elastic_plan(dict(global_batch_size=8), saved_world))
    iterator = iter(saving)
    next(iterator), next(iterator)
    state = saving.state_dict()
    assert (state["position"], state["world_size"]) == (16, saved_world)
    rest = _rank_batches(monkeypatch, sampler, new_world, state=state, count=4 if endless else None)
    # Neither repeated nor skipped: the uninterrupted order from the third global batch on.
    assert _global(rest) == whole[2:6]


def test_position_is_counted_in_global_batches(monkeypatch):
    monkeypatch.setattr(sampler_module, "get_dist_info", lambda: (1, 2))
    batches = ElasticBatchSampler(
        DefaultSampler(range(30), seed=0), elastic_plan(dict(global_batch_size=8), 2)
    )
    assert len(batches) == 4
    assert batches.samples_after(8, 2) == 24
    assert batches.samples_after(24, 5) == 32  # an epoch holds 4 padded global batches
    state = batches.state_dict()
    with pytest.raises(ValueError, match="position 4 is not a whole number of global batches"):
        batches.load_state_dict({**state, "position": 4})


def test_states_of_elastic_and_plain_samplers_do_not_mix(monkeypatch):
    plan = elastic_plan(dict(global_batch_size=8), 1)
    elastic = ElasticBatchSampler(DefaultSampler(range(30), seed=0), plan)
    with pytest.raises(ValueError, match=r"resume it with the same\s+elastic=dict\("):
        DefaultSampler(range(30), seed=0).load_state_dict(elastic.state_dict())
    with pytest.raises(ValueError, match="holds no global position"):
        elastic.load_state_dict(DefaultSampler(range(30), seed=0).state_dict())
    with pytest.raises(ValueError, match="dataset_length=30: this sampler has dataset_length=28"):
        ElasticBatchSampler(DefaultSampler(range(28), seed=0), plan).load_state_dict(
            elastic.state_dict()
        )


def test_other_samplers_are_refused():
    with pytest.raises(TypeError, match="DefaultSampler or an InfiniteSampler, got"):
        ElasticBatchSampler(
            torch.utils.data.SequentialSampler(range(4)), elastic_plan(dict(global_batch_size=2), 1)
        )


# -- per-sample randomness --------------------------------------------------------------------


class Draws:
    def __getitem__(self, index):
        return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_a_sample_draws_the_same_whatever_the_outer_state_which_is_put_back():
    key = SampleKey(stream_seed(3, 1), 11)
    random.seed(0), np.random.seed(0), torch.manual_seed(0)
    first = seeded_item(Draws(), key)
    after = Draws()[0]
    random.seed(99), np.random.seed(99), torch.manual_seed(99)
    np.random.normal()  # a cached second deviate in NumPy's legacy generator
    assert seeded_item(Draws(), key) == first
    random.seed(0), np.random.seed(0), torch.manual_seed(0)
    assert Draws()[0] == after  # the outer streams go on as if the sample was not read
    assert seeded_item(Draws(), SampleKey(stream_seed(3, 2), 11)) != first  # another epoch
    assert seeded_item(Draws(), SampleKey(stream_seed(3, 1), 12)) != first  # another sample


# -- runs -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """An elastic run and a run without elastic, each with its checkpoints and losses."""
    found = {}
    for name, elastic in (("elastic", dict(global_batch_size=8)), ("plain", None)):
        work_dir = tmp_path_factory.mktemp(name)
        runner = Runner(**elastic_cfg(work_dir, elastic=elastic))
        runner.train()
        found[name] = work_dir, losses(runner), weights(runner)
    return found


def _resume(tmp_path, checkpoint, **overrides):
    return Runner(
        **elastic_cfg(tmp_path / "resumed", resume=True, load_from=str(checkpoint), **overrides)
    )


def test_accumulation_trains_as_the_whole_global_batch(tmp_path, saved):
    _, expected, expected_weights = saved["elastic"]
    runner = Runner(**elastic_cfg(tmp_path, elastic=dict(global_batch_size=8, micro_batch_size=3)))
    runner.train()  # 4 micro-batches of 2
    got = losses(runner)
    assert sorted(got) == sorted(expected)
    assert all(abs(got[i] - expected[i]) < 1e-5 for i in got)
    for name, value in weights(runner).items():
        torch.testing.assert_close(value, expected_weights[name], rtol=0, atol=1e-5)


def test_a_same_size_elastic_resume_is_exact(tmp_path, saved):
    work_dir, expected, expected_weights = saved["elastic"]
    runner = _resume(tmp_path, work_dir / "iter_6.pth", elastic=dict(global_batch_size=8))
    runner.train()
    assert losses(runner) == {i: v for i, v in expected.items() if i >= 6}
    assert all(torch.equal(v, expected_weights[n]) for n, v in weights(runner).items())


def test_a_dataset_of_another_length_is_refused_naming_both_lengths(tmp_path, saved):
    work_dir = saved["elastic"][0]
    runner = _resume(tmp_path, work_dir / "iter_6.pth", elastic=dict(global_batch_size=8))
    runner._train_dataloader["dataset"]["length"] = 28
    with pytest.raises(ValueError) as error:
        runner.train()
    message = str(error.value)
    assert "the train dataset has 28 samples now and had 30 when the checkpoint was saved" in (
        message
    )
    assert "16 samples into epoch 1" in message


def test_another_global_batch_size_is_refused_naming_both(tmp_path, saved):
    work_dir = saved["elastic"][0]
    runner = _resume(tmp_path, work_dir / "iter_6.pth", elastic=dict(global_batch_size=4))
    words = "saved with elastic global_batch_size=8 and this run has elastic.global_batch_size=4"
    with pytest.raises(ValueError, match=re.escape(words)):
        runner.train()


def _as_saved_by(checkpoint: Path, target: Path, world_size: int) -> Path:
    """A copy of ``checkpoint`` whose meta says ``world_size`` processes wrote it."""
    state = torch.load(checkpoint, weights_only=True)
    state["meta"]["world_size"] = world_size
    torch.save(state, target)
    return target


def test_a_checkpoint_without_global_position_is_refused_at_another_size(tmp_path, saved):
    # Written without elastic (as every checkpoint before elastic existed), by "2 processes".
    old = _as_saved_by(saved["plain"][0] / "iter_6.pth", tmp_path / "old.pth", world_size=2)
    runner = _resume(tmp_path, old, elastic=dict(global_batch_size=8))
    with pytest.raises(ValueError) as error:
        runner.train()
    message = str(error.value)
    assert "written by 2 process(es) without a global sample position" in message
    assert "by a run without elastic, or by treadle-runner before 0.1.1" in message
    assert "where each rank stood in its own share of the data" in message
    assert "resume it with the config it was written with (no elastic) at 2 processes" in message
    # Without elastic, the refusal of another world size is as before, with the way out.
    runner = _resume(tmp_path, old)
    with pytest.raises(RuntimeError) as error:
        runner.train()
    assert "saved by a run of 2 processes and this run has 1" in str(error.value)
    assert "resume with 2 processes" in str(error.value)
    assert "elastic=dict(global_batch_size=...) writes checkpoints that" in str(error.value)


def test_a_checkpoint_without_global_position_resumes_unchanged_at_its_size(tmp_path, saved):
    work_dir, expected, expected_weights = saved["plain"]
    runner = _resume(tmp_path, work_dir / "iter_6.pth")
    runner.train()
    assert losses(runner) == {i: v for i, v in expected.items() if i >= 6}
    assert all(torch.equal(v, expected_weights[n]) for n, v in weights(runner).items())
    # ... and with elastic, the same refusal (its position is a rank's, not the run's).
    runner = _resume(tmp_path / "b", work_dir / "iter_6.pth", elastic=dict(global_batch_size=8))
    with pytest.raises(ValueError, match="without a global sample position"):
        runner.train()


def test_an_elastic_checkpoint_needs_elastic(tmp_path, saved):
    runner = _resume(tmp_path, saved["elastic"][0] / "iter_6.pth")
    with pytest.raises(
        ValueError,
        match=r"saved by an elastic run \(elastic=dict\(global_batch_"
        r"size=8\)\).*resume it with the same",
    ):
        runner.train()


def test_elastic_with_accumulative_counts_or_a_batch_sampler_is_refused(tmp_path):
    cfg = elastic_cfg(tmp_path / "a", elastic=dict(global_batch_size=8))
    cfg["optim_wrapper"] = dict(cfg["optim_wrapper"], accumulative_counts=2)
    with pytest.raises(
        ElasticConfigError, match="accumulative_counts=2 cannot be used with elastic"
    ):
        Runner(**cfg)
    cfg = elastic_cfg(tmp_path / "b", elastic=dict(global_batch_size=8))
    cfg["train_dataloader"]["batch_sampler"] = torch.utils.data.BatchSampler(range(30), 4, False)
    runner = Runner(**cfg)
    with pytest.raises(ValueError, match=r"train_dataloader\.batch_sampler cannot be used with"):
        runner.train()


def test_elastic_with_a_built_dataloader_is_refused(tmp_path):
    loader = torch.utils.data.DataLoader(ElasticToyDataset(), batch_size=4)
    runner = Runner(
        **elastic_cfg(tmp_path, elastic=dict(global_batch_size=8), train_dataloader=loader)
    )
    with pytest.raises(TypeError, match="elastic is set but the train dataloader was not built"):
        runner.train()


def test_elastic_is_a_config_key(tmp_path):
    cfg = elastic_cfg(tmp_path, elastic=dict(global_batch_size=8))
    runner = Runner.from_cfg(cfg)
    assert runner._elastic.global_batch_size == 8
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_checkpoint_at_an_epoch_boundary_resumes_with_the_next_epoch(tmp_path, saved):
    _, expected, expected_weights = saved["elastic"]
    elastic = dict(global_batch_size=8)
    runner = Runner(**elastic_cfg(tmp_path / "a", elastic=elastic, checkpoint_interval=4))
    runner.train()  # 4 global batches an epoch: iter_4 and iter_8 end epochs 1 and 2
    assert losses(runner) == expected
    state = torch.load(tmp_path / "a" / "iter_8.pth", weights_only=True)["loop"]["sampler"]
    assert (state["epoch"], state["position"], state["world_size"]) == (1, 32, 1)
    resumed = _resume(tmp_path / "b", tmp_path / "a" / "iter_8.pth", elastic=elastic)
    resumed.train()
    assert losses(resumed) == {i: v for i, v in expected.items() if i >= 8}
    assert all(torch.equal(v, expected_weights[n]) for n, v in weights(resumed).items())
