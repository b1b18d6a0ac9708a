import sys
import types

import pytest

from treadle.logging.rank import get_rank, get_rank_and_world_size, get_world_size


def test_single_process_by_default(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    assert get_rank_and_world_size() == (0, 1)
    assert get_rank() == 0
    assert get_world_size() == 1


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"RANK": "1", "WORLD_SIZE": "2"}, (1, 2)),
        ({"SLURM_PROCID": "3", "SLURM_NTASKS": "8"}, (3, 8)),
        ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4"}, (2, 4)),
        ({"PMI_RANK": "5", "PMI_SIZE": "6"}, (5, 6)),
        # torchrun's variables win over the scheduler's.
        ({"RANK": "1", "WORLD_SIZE": "2", "SLURM_PROCID": "7", "SLURM_NTASKS": "8"}, (1, 2)),
        # A rank alone proves that rank + 1 processes exist.
        ({"RANK": "3"}, (3, 4)),
        ({"RANK": "0"}, (0, 1)),
    ],
)
def test_launcher_variables(monkeypatch, variables, expected):
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert get_rank_and_world_size() == expected


@pytest.mark.parametrize(
    ("value", "message"), [("one", "must be an integer"), ("-1", "must not be negative")]
)
def test_bad_variable_is_named(monkeypatch, value, message):
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    monkeypatch.setenv("RANK", value)
    with pytest.raises(ValueError, match=f"RANK='{value}' {message}"):
        get_rank_and_world_size()


def _fake_dist(initialized):
    return types.SimpleNamespace(
        is_available=lambda: True,
        is_initialized=lambda: initialized,
        get_rank=lambda: 2,
        get_world_size=lambda: 3,
    )


def test_initialized_torch_distributed_wins(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.distributed", _fake_dist(initialized=True))
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert get_rank_and_world_size() == (2, 3)


def test_uninitialized_torch_distributed_falls_back_to_environment(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.distributed", _fake_dist(initialized=False))
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert get_rank_and_world_size() == (1, 2)
