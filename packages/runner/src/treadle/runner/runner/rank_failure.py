"""What a failed collective means: which collective it was, and the message that names the
rank(s) that died or did not arrive.

A gloo or NCCL error says "Timed out waiting 5000ms for recv" or "Connection reset by peer",
never which rank or which step of training. These helpers turn the traceback of the failure
and the peers' heartbeats (:mod:`.rank_health`) into a sentence a user can act on.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch.distributed as torch_dist

# Words of the errors gloo and NCCL raise when a peer is gone or late (their messages name the
# backend's source file or the process group); other errors that merely say "timed out" (a
# DataLoader's, a storage client's) are not about the ranks.
_BACKEND_WORDS = ("gloo", "nccl", "processgroup", "c10d")
_C10D_FILE = os.path.join("torch", "distributed", "distributed_c10d.py")
_AUTOGRAD_FILE = os.path.join("torch", "autograd", "")
_DDP_FILE = os.path.join("torch", "nn", "parallel", "distributed.py")
_TREADLE_DIST = os.path.join("treadle", "dist", "")
_TORCH_DIST = os.path.join("torch", "distributed", "")


class RankFailureError(RuntimeError):
    """A collective failed because another rank died, stopped or did not arrive in time; the
    message names the collective, the iteration and those ranks.

    Example:
        >>> try:
        ...     runner.train()
        ... except RankFailureError as error:
        ...     print(error)  # doctest: +SKIP
        rank 0: the DDP gradient all-reduce of iteration 5 timed out after 5 s ...
    """


@dataclass
class PeerState:
    """What one rank last said about itself (see :class:`.rank_health.RankHealth`).

    ``status`` is 'alive', 'dead', 'silent' (no heartbeat for a while on another host),
    'failed' (it raised; ``detail`` says what), 'left' (it ended its run) or 'unknown' (it has
    not beaten yet). ``progress`` orders positions in the loop: a rank behind another has a
    smaller one.
    """

    rank: int
    status: str
    where: str = "unknown position"
    progress: tuple[int, int] = (-1, -1)
    detail: str = ""


def is_collective_failure(error: BaseException) -> bool:
    """Whether ``error`` is a communication failure (a peer gone or late) rather than a bug of
    the step itself."""
    if isinstance(error, getattr(torch_dist, "DistError", ())):
        return True
    if not isinstance(error, RuntimeError) or isinstance(error, RankFailureError):
        return False
    text = str(error).lower()
    if any(word in text for word in _BACKEND_WORDS):
        return True
    frames = traceback.extract_tb(error.__traceback__)
    return any(_C10D_FILE in frame.filename for frame in frames)


def is_timeout(error: BaseException) -> bool:
    text = str(error).lower()
    return "timed out" in text or "timeout" in text


def collective_of(error: BaseException, model: Any = None) -> str:
    """The collective that failed, from the traceback of ``error``: a torch.distributed
    function (with the treadle line that called it), or DDP's gradient all-reduce when the
    failure came out of ``backward()`` of a DistributedDataParallel model."""
    frames = traceback.extract_tb(error.__traceback__)
    # The outermost torch.distributed frame is the call the program made (all_gather_object,
    # not the all_gather inside it); the frame before it, outside treadle.dist, made that call.
    c10d = [index for index, frame in enumerate(frames) if _C10D_FILE in frame.filename]
    if c10d:
        first = c10d[0]
        callers = [
            frame
            for frame in frames[:first]
            if _TREADLE_DIST not in frame.filename and _TORCH_DIST not in frame.filename
        ]
        name = f"torch.distributed.{frames[first].name}"
        if not callers:
            return name
        return f"{name} (called from {_short(callers[-1].filename)}:{callers[-1].lineno})"
    files = [frame.filename for frame in frames]
    if any(_DDP_FILE in path for path in files):
        return "DDP's forward (buffer broadcast)"
    if any(_AUTOGRAD_FILE in path for path in files):
        ddp = isinstance(model, torch_dist_ddp()) if model is not None else False
        return "the DDP gradient all-reduce" if ddp else "a collective inside backward()"
    return "a collective"


def torch_dist_ddp() -> type:
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel


def _short(path: str) -> str:
    marker = os.path.join("treadle", "")
    index = path.rfind(marker)
    return path[index:] if index >= 0 else os.path.basename(path)


def _seconds(timeout: timedelta | None) -> str:
    if timeout is None:
        return ""
    seconds = timeout.total_seconds()
    return f" after {seconds:g} s (env_cfg.dist_cfg.timeout)"


def failure_message(
    error: BaseException,
    *,
    rank: int,
    collective: str,
    where: str,
    progress: tuple[int, int],
    peers: Sequence[PeerState],
    timeout: timedelta | None = None,
) -> str:
    """The sentence :class:`RankFailureError` carries: what failed where, then each rank that
    is to blame (dead, failed, left, or behind this rank), then what the others were doing."""
    what = "timed out" + _seconds(timeout) if is_timeout(error) else "failed"
    head = f"rank {rank}: {collective} {where} {what}"
    blamed = [blame(peer, progress) for peer in peers]
    named = [text for text in blamed if text]
    if named:
        reason = "; ".join(named)
    else:
        reason = (
            "every other rank is alive and no rank is behind this one ("
            + ", ".join(f"rank {peer.rank} {peer.where}" for peer in peers)
            + "): they may be waiting in another collective"
        )
    return f"{head}: {reason}. The backend said: {str(error).strip()[:300]}"


def blame(peer: PeerState, progress: tuple[int, int]) -> str:
    """Why ``peer`` is to blame for a failure of a rank at ``progress``; "" when it is not."""
    if peer.status == "dead":
        return f"rank {peer.rank} died ({peer.detail}; its last heartbeat said {peer.where})"
    if peer.status == "silent":
        return (
            f"rank {peer.rank} stopped beating {peer.detail} (dead or frozen; its last "
            f"heartbeat said {peer.where})"
        )
    if peer.status == "failed":
        return f"rank {peer.rank} stopped with an error {peer.where}: {peer.detail}"
    if peer.status == "left":
        return f"rank {peer.rank} had already ended its run"
    if peer.status == "alive" and peer.progress < progress:
        return f"rank {peer.rank} did not arrive: it is alive and still {peer.where}"
    return ""
