"""A stand-in runner for LogProcessor tests: just what a LogProcessor reads.

``stub_runner(hub)`` gives an object with ``message_hub``, ``epoch``, ``iter``, ``max_epochs``,
``max_iters``, ``_train_loop``/``train_loop``/``val_loop``/``test_loop`` (each with a
``dataloader`` of the given length) and ``model``. ``fill_hub`` logs a typical run's scalars,
the losses as tensors like RuntimeInfoHook does. Both work with treadle's and MMEngine's
MessageHub, so the parity tests feed the same runner to both LogProcessors.
"""

from __future__ import annotations

from types import SimpleNamespace


class Batches:
    """A dataloader stand-in: only its length matters (None: a loader without a length)."""

    def __init__(self, length: int | None) -> None:
        self.length = length

    def __len__(self) -> int:
        if self.length is None:
            raise TypeError("object of type 'Batches' has no len()")
        return self.length


def stub_runner(
    hub,
    *,
    epoch: int = 0,
    iter: int = 9,
    max_epochs: int = 12,
    max_iters: int = 1000,
    train_len: int | None = 1563,
    val_len: int | None = 3,
    test_len: int | None = 4,
    train_loop_built: bool = True,
):
    train_loop = SimpleNamespace(dataloader=Batches(train_len))
    return SimpleNamespace(
        message_hub=hub,
        epoch=epoch,
        iter=iter,
        max_epochs=max_epochs,
        max_iters=max_iters,
        _train_loop=train_loop if train_loop_built else None,
        train_loop=train_loop,
        val_loop=SimpleNamespace(dataloader=Batches(val_len)),
        test_loop=SimpleNamespace(dataloader=Batches(test_len)),
        model=SimpleNamespace(),
    )


def fill_train(hub, steps: int = 12, *, eta: float | None = 1103.5, tensor=None) -> None:
    """Log ``steps`` train iterations: lr, loss (1, 2, 3, ...), time 0.1, data_time 0.01."""
    for i in range(steps):
        hub.update_scalar("train/lr", 0.001)
        loss = float(i + 1) if tensor is None else tensor(float(i + 1))
        hub.update_scalar("train/loss", loss)
        hub.update_scalar("train/time", 0.1)
        hub.update_scalar("train/data_time", 0.01)
    if eta is not None:
        hub.update_info("eta", eta)


def fill_val(hub, steps: int = 3, *, mode: str = "val", time: float = 0.2) -> None:
    """Log ``steps`` val (or test) iterations' times."""
    for _ in range(steps):
        hub.update_scalar(f"{mode}/time", time)
        hub.update_scalar(f"{mode}/data_time", time / 10)
