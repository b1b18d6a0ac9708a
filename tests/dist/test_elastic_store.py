"""Under torchrun's agent store, a restarted worker must not take the store of the workers
before it: rank 0 of each start hosts a fresh one, the others skip an address left by an
earlier start (its host is dead) and join the one with this start's token."""

from __future__ import annotations

import datetime
import socket
import threading

import pytest
import torch.distributed as torch_dist

from treadle.dist.elastic_store import ADDRESS_KEY, elastic_group_store


def _dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def agent(monkeypatch):
    """An agent's store, and the environment torchrun gives a worker of 2."""
    store = torch_dist.TCPStore(
        "127.0.0.1", 0, None, True, datetime.timedelta(seconds=10), wait_for_workers=False
    )
    for name, value in dict(
        TORCHELASTIC_USE_AGENT_STORE="True", MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(store.port), WORLD_SIZE="2", GROUP_WORLD_SIZE="1",
    ).items():  # fmt: skip
        monkeypatch.setenv(name, value)
    return store


def test_rank0_publishes_a_fresh_store_and_a_later_rank_joins_it_past_a_stale_address(
    agent, monkeypatch
):
    # What the workers of the start before left: the address of a store that is gone.
    agent.set(ADDRESS_KEY, f"127.0.0.1:{_dead_port()}:oldtoken")
    joined = {}

    def rank1() -> None:  # reads RANK (1) as it starts
        joined.update(elastic_group_store({"timeout": datetime.timedelta(seconds=20)}))

    monkeypatch.setenv("RANK", "1")
    worker = threading.Thread(target=rank1)
    worker.start()
    worker.join(0.5)  # rank 1 is reading the stale address and skipping it
    assert worker.is_alive()
    monkeypatch.setenv("RANK", "0")
    hosted = elastic_group_store({})
    worker.join(20)
    assert hosted["rank"] == 0 and hosted["world_size"] == 2
    assert joined["rank"] == 1
    joined["store"].set("from rank 1", "hello")
    assert hosted["store"].get("from rank 1") == b"hello"


def test_nothing_changes_without_the_agent_store_or_with_an_init_method(agent, monkeypatch):
    monkeypatch.setenv("RANK", "0")
    assert elastic_group_store({"init_method": "tcp://127.0.0.1:1"}) == {}
    monkeypatch.setenv("TORCHELASTIC_USE_AGENT_STORE", "False")
    assert elastic_group_store({}) == {}


def test_several_machines_are_told_how_a_restarted_machine_can_join(agent, monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("GROUP_WORLD_SIZE", "2")
    with pytest.warns(UserWarning, match="TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1"):
        elastic_group_store({})
