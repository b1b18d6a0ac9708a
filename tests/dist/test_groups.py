"""treadle.dist in real process groups: 2 and 3 local processes on gloo, started once per
session (see conftest.py) running workers/group_scenarios.py. Each test checks one scenario on
every rank against what the rank and world size imply."""

import math

import pytest

WORLD_SIZES = [2, 3]


@pytest.fixture(params=WORLD_SIZES, ids=lambda size: f"{size}ranks")
def group(request, group_results, helpers):
    """``(world_size, value)``: ``value(rank, scenario)`` is what the scenario returned there."""
    world_size = request.param
    results = group_results(world_size)
    return world_size, lambda rank, name: helpers.scenario_value(results, rank, name)


def test_every_rank_ran_every_scenario(group_results, helpers):
    for world_size in WORLD_SIZES:
        results = group_results(world_size)
        names = set(results[0])
        assert "scenario_init_dist_again" in names, results["outputs"]
        for rank in range(world_size):
            assert set(results[rank]) == names
            for name in names:
                helpers.scenario_value(results, rank, name)


def test_info(group):
    world_size, value = group
    for rank in range(world_size):
        info = value(rank, "scenario_info")
        assert info["dist_info"] == (rank, world_size)
        assert (info["rank"], info["world_size"]) == (rank, world_size)
        assert info["is_distributed"] is True
        assert info["is_main_process"] is (rank == 0)
        assert info["backend"] == "gloo"
        assert info["default_group_is_world"] is True
        assert info["comm_device"] == "cpu"
        assert info["infer_launcher"] == "pytorch"
        assert info["env_rank"] == str(rank)


def test_all_reduce_ops(group):
    world_size, value = group
    ranks = range(world_size)
    factors = [rank + 1 for rank in ranks]
    expected = {
        "sum": [sum(factors), 2.0 * sum(factors)],
        "SUM": [sum(factors), 2.0 * sum(factors)],
        "mean": [sum(factors) / world_size, 2.0 * sum(factors) / world_size],
        "max": [world_size, 2.0 * world_size],
        "min": [1.0, 2.0],
        "product": [math.prod(factors), math.prod(2.0 * factor for factor in factors)],
        # MMEngine's integer mean: the dtype stays, the quotient is rounded toward zero.
        "int_mean": ([sum(factors) // world_size, 10 * sum(factors) // world_size], "torch.int64"),
        "bor": [(1 << world_size) - 1],
        "transposed": [[sum(factors) * (row + 3 * col) for col in range(2)] for row in range(3)],
    }
    for rank in ranks:
        assert value(rank, "scenario_all_reduce_ops") == expected


def test_all_reduce_dict_of_non_tensors_is_refused_with_several_ranks(group):
    world_size, value = group
    for rank in range(world_size):
        assert value(rank, "scenario_all_reduce_dict_of_non_tensors") == (
            "TypeError",
            "all_reduce_dict needs tensor values, but data['loss'] is float",
        )


def test_unsupported_op_names_the_ops(group):
    world_size, value = group
    for rank in range(world_size):
        kind, message = value(rank, "scenario_all_reduce_unsupported_op")
        assert kind == "ValueError"
        assert "'avg'" in message
        for op in ("'sum'", "'mean'", "'product'", "'min'", "'max'"):
            assert op in message


def test_all_gather_and_all_gather_object(group):
    world_size, value = group
    tensors = [[rank, 10 * rank] for rank in range(world_size)]
    objects = [{"rank": rank, "text": "x" * rank} for rank in range(world_size)]
    for rank in range(world_size):
        assert value(rank, "scenario_all_gather") == (tensors, objects)


def test_gather_to_a_non_zero_rank(group):
    world_size, value = group
    last = world_size - 1
    for rank in range(world_size):
        gathered, objects, to_first = value(rank, "scenario_gather_to_last_rank")
        if rank == last:
            assert gathered == [[2.0 * source] for source in range(world_size)]
            assert objects == [("from", source) for source in range(world_size)]
        else:
            assert (gathered, objects) == ([], None)
        assert to_first == (list(range(world_size)) if rank == 0 else None)


def test_broadcast_from_a_non_zero_rank(group):
    world_size, value = group
    last = world_size - 1
    for rank in range(world_size):
        data, objects, from_first = value(rank, "scenario_broadcast_from_last_rank")
        assert data == [[float(last)] * 2] * 2
        assert objects == [f"rank {last}", {"n": last}]
        assert from_first == [7]


def test_sync_random_seed_is_rank_zeros_draw(group):
    world_size, value = group
    seed_of_rank_zero = value(0, "scenario_sync_random_seed")[1]
    local_draws = set()
    for rank in range(world_size):
        seed, local_draw = value(rank, "scenario_sync_random_seed")
        assert seed == seed_of_rank_zero
        assert 0 <= seed < 2**31
        local_draws.add(local_draw)
    assert len(local_draws) == world_size  # the ranks did draw different numbers


def test_barrier_returns(group):
    world_size, value = group
    assert [value(rank, "scenario_barrier") for rank in range(world_size)] == [None] * world_size


def test_all_reduce_dict_of_100_scalars_is_one_collective(group):
    world_size, value = group
    total_rank = sum(range(world_size))
    expected = {f"metric_{i:03d}": float(total_rank + world_size * i) for i in range(100)}
    for rank in range(world_size):
        calls, reduced = value(rank, "scenario_all_reduce_dict_one_collective")
        assert calls == 1
        assert reduced == expected


def test_all_reduce_dict_keeps_dtypes_and_shapes(group):
    world_size, value = group
    ranks = range(world_size)
    mean = sum(ranks) / world_size
    expected = {
        "count": (
            [
                sum(r + 1 for r in ranks) // world_size,
                sum(3 * (r + 1) for r in ranks) // world_size,
            ],
            "torch.int64",
            [2],
        ),
        "loss": ([[mean + 0.5, 1.0], [2.0, 2 * mean]], "torch.float64", [2, 2]),
        "acc": (pytest.approx(mean / 4), "torch.float32", []),
    }
    for rank in ranks:
        calls, reduced = value(rank, "scenario_all_reduce_dict_mixed")
        assert calls == 1
        assert reduced == expected


def test_all_reduce_params_coalesces(group):
    world_size, value = group
    ranks = range(world_size)
    total = sum(ranks)

    def summary(op):
        divide = world_size if op == "mean" else 1
        floats = [((total + world_size * i) / divide, "torch.float32") for i in range(5)]
        doubles = [((total + world_size * 0.25 * i) / divide, "torch.float64") for i in range(2)]
        return [*floats, *doubles, (total // divide, "torch.int64")]

    for rank in ranks:
        outcomes = value(rank, "scenario_all_reduce_params")
        # One collective per dtype (float32, float64, int64) ...
        assert outcomes["coalesced"] == (3, summary("sum"))
        assert outcomes["mean"] == (3, summary("mean"))
        # ... float32's 5 x 0.4 MB in 1 MB buckets of 2, 2 and 1 tensors ...
        assert outcomes["buckets_1mb"] == (5, summary("sum"))
        # ... or one per tensor without coalescing.
        assert outcomes["per_tensor"] == (8, summary("sum"))
        assert outcomes["module"] == ([float(world_size)] * 6, [-1.0, -1.0])


def test_collect_results_in_dataset_order(group):
    world_size, value = group
    dataset = [f"sample{index}" for index in range(7)]
    for rank in range(world_size):
        collected = value(rank, "scenario_collect_results")
        files_left = collected.pop("files_left")
        for way, result in collected.items():
            assert result == (dataset if rank == 0 else None), way
        # Rank 0 removed every part file it read from tmpdir.
        assert files_left == ([] if rank == 0 else None)


def test_collect_results_size_larger_than_gathered(group):
    world_size, value = group
    gathered = math.ceil(7 / world_size) * world_size
    for rank in range(world_size):
        errors = value(rank, "scenario_collect_results_size_too_large")
        for way, error in errors.items():
            if rank != 0:
                assert error is None, way
                continue
            kind, message = error
            assert kind == "ValueError", way
            assert f"size=100 is larger than the {gathered} results gathered" in message
            assert f"from {world_size} process(es)" in message


def test_local_group(group):
    world_size, value = group
    for rank in range(world_size):
        before, after = value(rank, "scenario_local_group")
        assert (before["local_rank"], before["local_size"]) == (rank, world_size)
        assert before["get_local_group"][0] == "RuntimeError"
        assert "call init_local_group" in before["get_local_group"][1]
        assert before["too_many_ranks"] == (
            "ValueError",
            f"init_local_group(node_rank=1, num_gpus_per_node={world_size}) names ranks "
            f"{world_size}..{2 * world_size - 1}, but the world has {world_size} processes",
        )
        assert (after["local_rank"], after["local_size"]) == (rank, world_size)
        assert after["group_size"] == world_size
        assert after["again"][0] == "RuntimeError"
        assert "already exists" in after["again"][1]


def test_collectives_on_a_subgroup(group):
    world_size, value = group
    for rank in range(world_size):
        outcome = value(rank, "scenario_subgroup")
        if rank >= 2:
            assert outcome is None
            continue
        assert outcome == {
            "world_size": 2,
            "rank": rank,
            "sum": 3.0,
            "gathered": [0, 1],
            "seed_synced": 1,
        }


def test_master_only_runs_on_rank_zero(group):
    world_size, value = group
    for rank in range(world_size):
        result, calls, name = value(rank, "scenario_master_only")
        assert name == "record"
        assert (result, calls) == ((42, [21]) if rank == 0 else (None, []))


def test_init_dist_when_already_initialized(group):
    world_size, value = group
    for rank in range(world_size):
        same, other, backend = value(rank, "scenario_init_dist_again")
        assert len(same) == 1
        assert "does nothing: torch.distributed is already initialized" in same[0]
        kind, message = other
        assert kind == "RuntimeError"
        assert f"already initialized (backend 'gloo', rank {rank} of {world_size})" in message
        assert "destroy_process_group" in message
        assert backend == "gloo"
