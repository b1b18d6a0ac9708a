"""NaN and infinite losses: found without waiting for the device at every step.

The train loops keep a reference to each step's ``'loss'`` tensor and look at them all at
once every ``check_interval`` steps, before a checkpoint is saved, before validation and at
the end of each epoch: one device sync per check. A non-finite loss stops training with a
:class:`NonFiniteLossError` naming the first iteration where it appeared.

With ``skip_nonfinite_loss=True`` (or ``nonfinite_loss='skip'``) in ``train_cfg`` the loop
instead checks each loss before the optimizer uses it (one sync per step, the price of deciding
in time) and drops that batch: no backward, no optimizer step. ``nonfinite_loss='rollback'``
keeps the cheap check and, on a NaN, puts the weights and the optimizer's state back to the
last checkpoint (see :mod:`.nonfinite_rollback`).

The error names the loss terms that were not finite (``loss_cls``...), read from the step's
outputs (the log variables ``train_step`` returns): the watch keeps a reference to the outputs,
not a copy, so this costs nothing per step.

With several processes the ranks decide together (:mod:`.rank_agreement`): each check adds one
small all-reduce of a flag, and the skipper folds it into its per-step check, so that every rank
stops, skips the same batch or rolls back when any rank's loss went bad, and every rank's
message names the rank(s) and the iteration. A run of one process exchanges nothing.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import torch

from treadle import dist
from treadle.logging import print_log

from .rank_agreement import RankAgreement, describe_ranks


class NonFiniteLossError(FloatingPointError):
    """The training loss became NaN or infinite; the message names the iteration and the loss
    terms (and, with several processes, the ranks). ``iteration`` (1-based, as in the message;
    the earliest of the ranks), ``terms`` (of this rank) and ``ranks`` (those whose loss went
    bad; empty in a run of one process) say the same for code.

    Example:
        >>> try:
        ...     runner.train()
        ... except NonFiniteLossError as error:
        ...     print(error.iteration, error.terms)  # doctest: +SKIP
        7 ('loss_cls',)
    """

    iteration: int | None = None
    terms: tuple[str, ...] = ()
    ranks: tuple[int, ...] = ()


ACTIONS = ("stop", "skip", "rollback")


def check_action(nonfinite_loss: Any, skip_nonfinite_loss: Any) -> str:
    """The action of ``train_cfg``: ``nonfinite_loss`` if given, else from the older
    ``skip_nonfinite_loss`` flag."""
    if not isinstance(skip_nonfinite_loss, bool):
        raise TypeError(
            f"train_cfg skip_nonfinite_loss must be True or False, got {skip_nonfinite_loss!r}"
        )
    if nonfinite_loss is None:
        return "skip" if skip_nonfinite_loss else "stop"
    if nonfinite_loss not in ACTIONS:
        import difflib

        close = difflib.get_close_matches(str(nonfinite_loss), ACTIONS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"train_cfg nonfinite_loss must be one of {', '.join(map(repr, ACTIONS))}, got "
            f"{nonfinite_loss!r}{hint}"
        )
    if skip_nonfinite_loss and nonfinite_loss != "skip":
        raise ValueError(
            f"train_cfg sets skip_nonfinite_loss=True and nonfinite_loss={nonfinite_loss!r}: "
            "keep one of them"
        )
    return nonfinite_loss


def _terms(outputs: Any) -> list[tuple[str, Any]]:
    """The loss terms of a step's outputs that are not finite, besides the total."""
    if not isinstance(outputs, dict):
        return []
    bad = []
    for key, value in outputs.items():
        if key == "loss" or not isinstance(value, (torch.Tensor, float, int)):
            continue
        try:
            if not _finite(value):
                bad.append((key, value))
        except (TypeError, ValueError, RuntimeError):  # not a number
            continue
    return bad


def _shown(value: Any) -> Any:
    return value.detach().float().reshape(-1)[0].item() if torch.is_tensor(value) else value


def _finite(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return bool(torch.isfinite(value.detach()).all())
    return math.isfinite(float(value))


def _all_finite(losses: list[Any]) -> bool:
    """Whether every held loss is finite, read the cheapest way for where they are."""
    if all(type(loss) is torch.Tensor and loss.is_cpu for loss in losses):
        # Host memory: reading each scalar costs half of stacking them and three kernels.
        try:
            return all(map(math.isfinite, [loss.item() for loss in losses]))
        except (RuntimeError, TypeError):  # a loss of several elements, or complex
            pass
    try:
        # Scalar tensors on one device: one stack, one sync.
        return bool(torch.isfinite(torch.stack(losses)).all())
    except (TypeError, RuntimeError):  # numbers, or tensors of other shapes or devices
        return all(_finite(loss) for loss in losses)


class LossWatch:
    """Holds the losses of the steps since the last check and checks them together.

    Example:
        >>> watch = LossWatch(check_interval=2)
        >>> watch.add({'loss': torch.tensor(0.5)}, iteration=0, epoch=0, batch_idx=0)
        >>> try:
        ...     watch.add({'loss': torch.tensor(float('nan'))}, iteration=1, epoch=0, batch_idx=1)
        ... except NonFiniteLossError as error:
        ...     print(str(error).split(';')[0])
        the training loss is nan at iteration 2 (epoch 1, batch 2)
    """

    def __init__(
        self, check_interval: int = 50, on_error: Any = None, agreement: RankAgreement | None = None
    ) -> None:
        if isinstance(check_interval, bool) or not isinstance(check_interval, int):
            raise TypeError(
                f"train_cfg nonfinite_check_interval must be an int, got "
                f"{type(check_interval).__name__}: {check_interval!r}"
            )
        if check_interval < 1:
            raise ValueError(
                f"train_cfg nonfinite_check_interval must be >= 1, got {check_interval}"
            )
        self.check_interval = check_interval
        self._losses: list[Any] = []
        # The outputs the losses came from, to name the bad terms when one is not finite.
        self._outputs: list[Any] = []
        # Called with the error instead of raising it (the rollback); may raise it.
        self.on_error = on_error
        # (iteration, epoch, batch_idx) of the first loss held.
        self._first: tuple[int, int | None, int] = (0, 0, 0)
        # Where the ranks of a multi-process run agree on what a check found (None: each
        # process decides alone).
        self.agreement = agreement

    def add(self, outputs: Any, iteration: int, epoch: int | None, batch_idx: int) -> None:
        """Keep this step's loss; check when ``check_interval`` are held."""
        try:
            loss = outputs["loss"]
        except (TypeError, KeyError, IndexError):  # no dict, or no 'loss' in it
            return
        losses = self._losses
        if not losses:
            self._first = (iteration, epoch, batch_idx)
        losses.append(loss)
        self._outputs.append(outputs)
        if len(losses) >= self.check_interval:
            self.check()

    def next_check(self, iteration: int) -> int:
        """The iteration whose loss fills the held ones to ``check_interval``, when
        ``iteration`` is the next to run."""
        return iteration + self.check_interval - len(self._losses) - 1

    def add_steps(self, steps: list[tuple], epoch: int | None) -> None:
        """Keep the losses of recorded steps (``(iteration, batch_idx, _, _, outputs)``, see
        treadle.runner.utils.train_steps); check when ``check_interval`` are held."""
        losses = self._losses
        for iteration, batch_idx, _, _, outputs in steps:
            try:
                loss = outputs["loss"]
            except (TypeError, KeyError, IndexError):  # no dict, or no 'loss' in it
                continue
            if not losses:
                self._first = (iteration, epoch, batch_idx)
            losses.append(loss)
            self._outputs.append(outputs)
        if len(losses) >= self.check_interval:
            self.check()

    def check(self, agree: bool = True) -> None:
        """Raise :class:`NonFiniteLossError` if a held loss is NaN or infinite; forget them.

        With other ranks, they agree first (one small all-reduce, every rank checks at the
        same points): every rank acts when any rank's loss went bad, and says which.
        ``agree=False``: this rank decides alone (a call that other ranks may not make)."""
        losses, self._losses = self._losses, []
        outputs, self._outputs = self._outputs, []
        if not losses:
            return
        offset = None
        if not _all_finite(losses):
            offset = next(i for i, loss in enumerate(losses) if not _finite(loss))
        agreement = self.agreement
        if agree and agreement is not None and agreement.active():
            bad_iteration = 0 if offset is None else self._first[0] + offset + 1
            bad = agreement.agree(bad_iteration)
            if bad:
                self._act(self._error(losses, outputs, offset, bad))
            return
        if offset is not None:
            self._act(self._error(losses, outputs, offset, None))

    def _error(
        self, losses: list[Any], outputs: list[Any], offset: int | None, bad: dict | None
    ) -> NonFiniteLossError:
        """The error for the held losses; ``offset``: this rank's first bad one (None: all
        finite here); ``bad``: every bad rank's first bad iteration (None: one process)."""
        iteration, epoch, batch_idx = self._first
        rank = dist.get_rank()
        if self.on_error is not None:
            action = "training rolls back to the last checkpoint"
        else:
            action = (
                "training stops" + (" on every rank" if bad is not None else "") + ". A too "
                "high learning rate or a log/division of zero is the usual cause; to drop such "
                "batches and go on, set train_cfg=dict(..., skip_nonfinite_loss=True) (or "
                "nonfinite_loss='skip' or 'rollback')"
            )
        if offset is None:  # only other ranks' losses went bad
            error = NonFiniteLossError(
                f"the training loss is not finite at {describe_ranks(bad)}; on this rank "
                f"({rank}) the losses were finite; {action}"
            )
            error.iteration, error.ranks = min(bad.values()), tuple(sorted(bad))
            return error
        value = losses[offset]
        # Within one check the batch index advances with the iteration (a check never spans
        # two epochs: the loop checks at each epoch's end).
        where = f"iteration {iteration + offset + 1}"
        if epoch is not None:
            where += f" (epoch {epoch + 1}, batch {batch_idx + offset + 1})"
        terms = _terms(outputs[offset]) if offset < len(outputs) else []
        if terms:
            named = ", ".join(f"{key}={_shown(term)}" for key, term in terms)
            term_text = f"the loss term{'s' if len(terms) > 1 else ''} {named}"
        else:
            term_text = "the total loss (no term of the outputs is itself non-finite)"
        if bad is None:
            text = f"the training loss is {_shown(value)} at {where}; from {term_text}"
        else:
            text = (
                f"the training loss is not finite at {describe_ranks(bad)}; on this rank "
                f"({rank}) it is {_shown(value)} at {where}, from {term_text}"
            )
        error = NonFiniteLossError(f"{text}; {action}")
        error.iteration = iteration + offset + 1
        error.terms = tuple(key for key, _ in terms)
        if bad is not None:
            error.iteration, error.ranks = min(bad.values()), tuple(sorted(bad))
        return error

    def _act(self, error: NonFiniteLossError) -> None:
        if self.on_error is not None:
            self.on_error(error)
            return
        raise error


class SkipNonFiniteOptimWrapper:
    """Stands in for the optimizer wrapper during ``train_step``: a non-finite loss is not
    back-propagated and the optimizer does not step; every other call goes to the wrapper.

    Example:
        >>> from treadle.runner.optim import OptimWrapper
        >>> model = torch.nn.Linear(2, 1)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=1)
        >>> wrapper = SkipNonFiniteOptimWrapper(OptimWrapper(optimizer))
        >>> wrapper.update_params(model(torch.ones(1, 2)).sum())  # finite: a normal step
        >>> wrapper.skipped, wrapper.inner_count
        (0, 1)

    A NaN or infinite loss is logged as a warning with the step, and counted in ``skipped``.
    With ``agreement`` (a :class:`RankAgreement`) and other ranks, the ranks agree on each loss
    (one all-reduce of a flag per step, where the check already waits for the loss) and all skip
    the batch when any rank's loss is not finite; ``iteration()`` gives the 1-based iteration the
    message names.
    """

    def __init__(
        self,
        optim_wrapper: Any,
        describe_step: Any = None,
        _count: list[int] | None = None,
        *,
        agreement: RankAgreement | None = None,
        iteration: Any = None,
    ) -> None:
        if agreement is not None and iteration is None:
            raise ValueError("SkipNonFiniteOptimWrapper(agreement=...) needs iteration=")
        self._wrapped = optim_wrapper
        self._describe_step = describe_step
        # Shared with the guards of the sub-wrappers of an OptimWrapperDict.
        self._count = [0] if _count is None else _count
        self._agreement = agreement
        self._iteration = iteration

    @property
    def skipped(self) -> int:
        """How many batches were dropped so far."""
        return self._count[0]

    def update_params(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        finite = _finite(loss)
        agreement = self._agreement
        if agreement is not None and agreement.active():
            bad = agreement.agree(0 if finite else self._iteration())
            if not bad:
                self._wrapped.update_params(loss, *args, **kwargs)
                return
            self._count[0] += 1
            print_log(
                f"skipped the batch on every rank: the loss is not finite at "
                f"{describe_ranks(bad)} (on rank {dist.get_rank()} it is {_shown(loss)}; "
                "skip_nonfinite_loss=True): no backward, no optimizer step",
                logger="current",
                level=logging.WARNING,
            )
            return
        if finite:
            self._wrapped.update_params(loss, *args, **kwargs)
            return
        self._count[0] += 1
        where = f" at {self._describe_step()}" if self._describe_step is not None else ""
        print_log(
            f"skipped a batch whose loss is {_shown(loss)}"
            f"{where} (skip_nonfinite_loss=True): no backward, no optimizer step",
            logger="current",
            level=logging.WARNING,
        )

    def __getitem__(self, key: str) -> Any:
        # Several optimizers (OptimWrapperDict): each gets the same guard.
        return SkipNonFiniteOptimWrapper(
            self._wrapped[key],
            self._describe_step,
            self._count,
            agreement=self._agreement,
            iteration=self._iteration,
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)
