"""``MessageHub.pending_writer``: a function the hub calls before each read, so that a writer can
hold values back and write them only when someone reads (treadle-runner's train loops do, for
the steps at which they skipped the recording hooks)."""

from __future__ import annotations

import pytest

from treadle.logging import MessageHub


class HeldBack:
    """Writes the held losses when called; counts its calls."""

    def __init__(self, hub: MessageHub) -> None:
        self.hub = hub
        self.held: list[float] = []
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.held:
            self.hub.extend_scalar("train/loss", self.held)
            self.held = []
        self.hub.update_info("written", self.calls)


@pytest.fixture
def hub() -> MessageHub:
    hub = MessageHub("pending")
    hub.update_scalar("train/loss", 1.0)
    return hub


@pytest.mark.parametrize(
    "read",
    [
        lambda hub: hub.get_scalar("train/loss").data[0],
        lambda hub: hub.log_scalars["train/loss"].data[0],
        lambda hub: hub.state_dict()["log_scalars"]["train/loss"].data[0],
    ],
    ids=["get_scalar", "log_scalars", "state_dict"],
)
def test_a_read_of_the_scalars_writes_what_is_held_first(hub, read):
    writer = hub.pending_writer = HeldBack(hub)
    writer.held = [2.0, 3.0]
    assert read(hub) == [1.0, 2.0, 3.0]
    # Written once: the next read finds nothing held.
    assert read(hub) == [1.0, 2.0, 3.0]
    assert writer.calls == 2


def test_runtime_info_reads_call_it_too(hub):
    writer = hub.pending_writer = HeldBack(hub)
    assert hub.get_info("written") == 1
    assert hub.runtime_info["written"] == 2
    assert hub.get_info("missing", None) is None
    assert writer.calls == 3


def test_writes_do_not_call_it(hub):
    writer = hub.pending_writer = HeldBack(hub)
    hub.update_scalar("train/loss", 2.0)
    hub.extend_scalar("train/loss", [3.0])
    hub.update_scalars({"train/acc": 0.5})
    hub.update_info("epoch", 1)
    hub.pop_info("epoch")
    assert writer.calls == 0


def test_reads_while_it_writes_do_not_call_it_again(hub):
    seen = []

    def writer() -> None:
        # Reading the hub from inside the writer (or from code it calls) sees it as it is.
        seen.append(hub.get_scalar("train/loss").current())
        hub.update_scalar("train/loss", 5.0)

    hub.pending_writer = writer
    assert hub.get_scalar("train/loss").current() == 5.0
    assert seen == [1.0]
    assert hub.pending_writer is writer  # back in place for the next read


def test_a_failing_writer_raises_to_the_reader_and_stays(hub):
    def writer() -> None:
        raise RuntimeError("cannot write")

    hub.pending_writer = writer
    with pytest.raises(RuntimeError, match="cannot write"):
        hub.get_scalar("train/loss")
    assert hub.pending_writer is writer


def test_without_a_writer_reads_are_as_before(hub):
    assert hub.pending_writer is None
    assert hub.get_scalar("train/loss").current() == 1.0
    writer = hub.pending_writer = HeldBack(hub)
    hub.pending_writer = None
    hub.get_scalar("train/loss")
    assert writer.calls == 0


def test_loading_from_another_hub_takes_its_held_values(hub):
    writer = hub.pending_writer = HeldBack(hub)
    writer.held = [2.0]
    copy = MessageHub("pending-copy")
    copy.load_state_dict(hub)
    assert copy.get_scalar("train/loss").data[0] == [1.0, 2.0]
    assert copy.pending_writer is None
