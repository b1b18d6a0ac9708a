"""A fresh store for each start of the workers under torchrun's elastic agent.

torchrun's agent (torch 2.5 and later) hosts one TCPStore for the whole job and gives the
workers its address (``TORCHELASTIC_USE_AGENT_STORE=True``). The store outlives the workers:
when the agent restarts them (``--max-restarts``, or a machine that joins again), the new
workers find the keys the old ones wrote, so gloo reads a dead peer's address and fails to
connect ("Connection refused") or hangs, and NCCL may read an old unique id (the problem of
pytorch/pytorch#135712, back in torch 2.13 for the store the agent shares). The restart count
torchrun exports cannot tell the starts apart either: each agent counts its own restarts, so on
several machines the counts differ.

So rank 0 of each start hosts a store of its own on a free port and publishes its address and a
random token under one key of the agent's store; the other ranks read the key, connect, and take
the store once it holds the same token. An address left by an earlier start names a store whose
host (that start's rank 0) is dead, because the agents stop every old worker before they start
new ones: the connection is refused at once and they read the key again. This is one exchange
when the group starts, nothing per step.

Example:
    >>> # in a worker started by torchrun, before init_process_group
    >>> kwargs.update(elastic_group_store(kwargs))
    >>> torch.distributed.init_process_group("gloo", **kwargs)
"""

from __future__ import annotations

import datetime
import os
import secrets
import socket
import time
import warnings
from typing import Any

import torch.distributed as torch_dist

# The key of the agent's store under which rank 0 publishes "host:port:token".
ADDRESS_KEY = "treadle/group_store_address"
_TOKEN_KEY = "treadle/group_store_token"
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # torch's for a store and a gloo group
_RETRY_SECONDS = 0.2


def _torch_version() -> str:
    import torch

    return torch.__version__


def _agent_store(timeout: datetime.timedelta) -> Any:
    return torch_dist.TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]),
        is_master=False,
        timeout=timeout,
    )


def _host_own_store(agent: Any, timeout: datetime.timedelta) -> Any:
    own = torch_dist.TCPStore(
        os.environ["MASTER_ADDR"], 0, None, True, timeout, wait_for_workers=False
    )
    token = secrets.token_hex(8)
    own.set(_TOKEN_KEY, token)
    # The agent's store lives on rank 0's machine (MASTER_ADDR): others reach this one there.
    agent.set(ADDRESS_KEY, f"{os.environ['MASTER_ADDR']}:{own.port}:{token}")
    return own


def _listening(host: str, port: int) -> bool:
    # A plain socket first: a dead store refuses at once, without TCPStore's retries and logs.
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def _joined(address: str, timeout: datetime.timedelta) -> Any:
    """The store at ``address`` ("host:port:token") if it is this start's, else None."""
    host, port, token = address.rsplit(":", 2)
    if not _listening(host, int(port)):
        return None
    try:
        store = torch_dist.TCPStore(
            host, int(port), is_master=False, timeout=datetime.timedelta(seconds=5)
        )
        if store.get(_TOKEN_KEY).decode() != token:
            return None
    except (RuntimeError, ValueError):  # the port now belongs to another program
        return None
    store.set_timeout(timeout)
    return store


def _join_own_store(agent: Any, timeout: datetime.timedelta) -> Any:
    deadline = time.monotonic() + timeout.total_seconds()
    while True:
        store = _joined(agent.get(ADDRESS_KEY).decode(), timeout)
        if store is not None:
            return store
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"rank {os.environ['RANK']}: rank 0 of this start of the workers did not publish "
                f"its store in the agent's store ({os.environ['MASTER_ADDR']}:"
                f"{os.environ['MASTER_PORT']}) within {timeout}"
            )
        time.sleep(_RETRY_SECONDS)


def elastic_group_store(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The ``store``, ``rank`` and ``world_size`` arguments of ``init_process_group`` for a
    worker of torchrun's agent store; ``{}`` when the process was not started so, or when
    ``kwargs`` (the other arguments) name an ``init_method`` or a ``store`` already.

    Example:
        >>> elastic_group_store({})  # under torchrun
        {'store': <torch.distributed.TCPStore ...>, 'rank': 1, 'world_size': 2}
    """
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != str(True):
        return {}
    if kwargs.get("init_method") is not None or kwargs.get("store") is not None:
        return {}
    if int(os.environ.get("GROUP_WORLD_SIZE", "1")) > 1:
        warnings.warn(
            "torchrun on several machines with the store its agent shares: a machine that "
            "starts again (its agent restarted) cannot join the rendezvous in torch "
            f"{_torch_version()}; start torchrun with "
            "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 in its environment on every machine",
            stacklevel=2,
        )
    timeout = kwargs.get("timeout") or _DEFAULT_TIMEOUT
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    agent = _agent_store(timeout)
    store = _host_own_store(agent, timeout) if rank == 0 else _join_own_store(agent, timeout)
    return {"store": store, "rank": rank, "world_size": world_size}
